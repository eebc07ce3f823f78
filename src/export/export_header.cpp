#include "src/export/export_header.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

namespace portcheck {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("launch descriptor: " + what);
}

const json& field(const json& d, const char* key) {
  if (!d.is_object() || !d.contains(key)) bad(std::string("missing \"") + key + "\"");
  return d.at(key);
}

std::string string_field(const json& d, const char* key) {
  const auto& v = field(d, key);
  if (!v.is_string()) bad(std::string("\"") + key + "\" is not a string");
  return v.get<std::string>();
}

std::uint64_t uint_field(const json& d, const char* key, std::uint64_t fallback) {
  if (!d.is_object() || !d.contains(key)) return fallback;
  const auto& v = d.at(key);
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  bad(std::string("\"") + key + "\" is not a non-negative integer");
}

bool bool_field(const json& d, const char* key) {
  return d.is_object() && d.contains(key) && d.at(key).is_boolean() && d.at(key).get<bool>();
}

// A C++ string literal holding `text` (escaped; non-ASCII bytes as octal escapes).
std::string literal(std::string_view text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f && c != '?') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    }
  }
  return out + "\"";
}

// Text safe inside a // comment (one line, printable ASCII).
std::string comment_text(std::string_view text) {
  std::string out;
  for (const unsigned char c : text) out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  return out;
}

std::string json_scalar_text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Names a parameter of launch() must not take: C++ keywords, the names launch() itself uses, and
// macros a C/C++ program commonly has defined.
const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = {
      // C++ keywords and alternative tokens
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "final", "override",
      "import", "module",
      // names the generated launch() and its types use
      "stream", "programs_x", "programs_y", "programs_z", "std", "portcheck_export", "hip_api",
      "cuda_driver", "hip_driver", "CUDA_SUCCESS", "CUDA_ERROR_INVALID_VALUE",
      "CUDA_ERROR_NOT_SUPPORTED", "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION",
      "CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE",
      "CU_CLUSTER_SCHEDULING_POLICY_SPREAD", "CU_LAUNCH_ATTRIBUTE_COOPERATIVE",
      "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION", "CUdeviceptr", "CUstream",
      "CUresult", "CUfunction", "CUmodule", "CUlaunchConfig", "CUlaunchAttribute", "int8_t",
      "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t",
      // common macros
      "NULL", "errno", "assert", "EOF", "stdin", "stdout", "stderr", "linux", "unix", "i386",
      "major", "minor", "BUFSIZ"};
  return names;
}

struct Param {
  std::string kind;      // argument | global_scratch | profile_scratch
  std::string name;      // C++ identifier (arguments only)
  std::string original;  // name in the descriptor
  std::string cpp_type;
  std::string triton_type;
};

std::string cpp_type_for(const std::string& c_type, bool hip) {
  if (c_type == "CUdeviceptr" || c_type == "hipDeviceptr_t")
    return hip ? "hip_api::deviceptr_t" : "CUdeviceptr";
  static const std::set<std::string> ints = {"int8_t",  "int16_t",  "int32_t",  "int64_t",
                                             "uint8_t", "uint16_t", "uint32_t", "uint64_t"};
  if (ints.contains(c_type)) return "std::" + c_type;
  if (c_type == "float" || c_type == "double") return c_type;
  return "";
}

std::vector<Param> read_params(const json& d, bool hip) {
  const auto& list = field(d, "params");
  if (!list.is_array()) bad("\"params\" is not a list");
  std::vector<Param> params;
  std::set<std::string> used;
  bool seen_global = false;
  bool seen_profile = false;
  for (const auto& p : list) {
    Param param;
    param.kind = p.is_object() ? p.value("kind", std::string("argument")) : "";
    param.original = p.is_object() ? p.value("name", std::string()) : "";
    param.triton_type = p.is_object() ? p.value("triton_type", std::string()) : "";
    const std::string c_type = p.is_object() ? p.value("c_type", std::string()) : "";
    if (param.kind == "global_scratch" || param.kind == "profile_scratch") {
      bool& seen = param.kind == "global_scratch" ? seen_global : seen_profile;
      if (seen) bad("two \"" + param.kind + "\" parameters");
      seen = true;
      param.cpp_type = hip ? "hip_api::deviceptr_t" : "CUdeviceptr";
    } else if (param.kind == "argument") {
      param.cpp_type = cpp_type_for(c_type, hip);
      if (param.cpp_type.empty())
        bad("parameter \"" + param.original + "\" (" +
            (param.triton_type.empty() ? "?" : param.triton_type) + ") has c_type \"" + c_type +
            "\", which the launcher cannot pass");
      std::string name = export_identifier(param.original);
      if (name == "kernel" && param.original.empty()) name = "arg" + std::to_string(params.size());
      if (reserved_names().contains(name) || name.ends_with("_")) name += "_arg";
      const std::string base = name;
      for (int n = 2; used.contains(name); ++n) name = base + "_" + std::to_string(n);
      used.insert(name);
      param.name = name;
    } else {
      bad("parameter \"" + param.original + "\" has unknown kind \"" + param.kind + "\"");
    }
    params.push_back(param);
  }
  return params;
}

// The image as rows of hex bytes.
void write_bytes(std::ostringstream& out, const std::vector<unsigned char>& binary) {
  static const char* hex = "0123456789abcdef";
  std::string line = "     ";
  for (std::size_t i = 0; i < binary.size(); ++i) {
    line += " 0x";
    line += hex[binary[i] >> 4];
    line += hex[binary[i] & 15];
    line += ',';
    if (i % 16 == 15 || i + 1 == binary.size()) {
      out << line << '\n';
      line = "     ";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The driver tables, shared by every generated header (guarded, so several headers can be
// included in one translation unit).

constexpr const char* kCudaDriver = R"CPP(
#ifndef PORTCHECK_EXPORT_CUDA_DRIVER_V1
#define PORTCHECK_EXPORT_CUDA_DRIVER_V1
  // The versioned symbol cuda.h maps a name to (cuMemAlloc -> cuMemAlloc_v2, and the _ptsz/_ptds
  // forms under CUDA_API_PER_THREAD_DEFAULT_STREAM): dlsym must ask for exactly that one.
#define PORTCHECK_EXPORT_STR_(x) #x
#define PORTCHECK_EXPORT_STR(x) PORTCHECK_EXPORT_STR_(x)
  namespace portcheck_export {

  // libcuda.so.1, opened at run time: a program using these headers links without -lcuda and
  // starts on machines without a GPU (every call then returns an error code).
  // Each member is named like the driver function (cuda.h's macros apply to both, so
  // `cuda_driver().cuMemAlloc(&p, n)` calls cuMemAlloc_v2).
  struct CudaDriver {
    void* handle = nullptr;
    CUresult status = CUDA_ERROR_NOT_INITIALIZED;  // of dlopen, dlsym and cuInit(0)
    char message[256] = {};                        // why, when status is not CUDA_SUCCESS
    decltype(&::cuInit) cuInit = nullptr;
    decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
    decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
    decltype(&::cuDriverGetVersion) cuDriverGetVersion = nullptr;
    decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
    decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
    decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
    decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
    decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
    decltype(&::cuDevicePrimaryCtxRelease) cuDevicePrimaryCtxRelease = nullptr;
    decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
    decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
    decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
    decltype(&::cuStreamSynchronize) cuStreamSynchronize = nullptr;
    decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
    decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
    decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
    decltype(&::cuFuncSetAttribute) cuFuncSetAttribute = nullptr;
    decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
    decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;  // optional: CUDA 12+ drivers
    decltype(&::cuMemAlloc) cuMemAlloc = nullptr;
    decltype(&::cuMemFree) cuMemFree = nullptr;
    decltype(&::cuMemcpyHtoD) cuMemcpyHtoD = nullptr;
    decltype(&::cuMemcpyDtoH) cuMemcpyDtoH = nullptr;
    decltype(&::cuMemsetD8) cuMemsetD8 = nullptr;

    bool ok() const noexcept { return status == CUDA_SUCCESS; }

    void open() noexcept {
      handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        fail(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "cannot dlopen libcuda.so.1: ", ::dlerror());
        return;
      }
#define PORTCHECK_EXPORT_SYM(member, required)                                                \
    member = reinterpret_cast<decltype(member)>(::dlsym(handle, PORTCHECK_EXPORT_STR(member))); \
    if ((required) && member == nullptr) {                                                      \
      fail(CUDA_ERROR_NOT_FOUND, "libcuda.so.1 has no symbol ", PORTCHECK_EXPORT_STR(member));  \
      return;                                                                                   \
    }
      PORTCHECK_EXPORT_SYM(cuInit, true)
      PORTCHECK_EXPORT_SYM(cuGetErrorString, true)
      PORTCHECK_EXPORT_SYM(cuGetErrorName, true)
      PORTCHECK_EXPORT_SYM(cuDriverGetVersion, true)
      PORTCHECK_EXPORT_SYM(cuDeviceGet, true)
      PORTCHECK_EXPORT_SYM(cuDeviceGetCount, true)
      PORTCHECK_EXPORT_SYM(cuDeviceGetName, true)
      PORTCHECK_EXPORT_SYM(cuDeviceGetAttribute, true)
      PORTCHECK_EXPORT_SYM(cuDevicePrimaryCtxRetain, true)
      PORTCHECK_EXPORT_SYM(cuDevicePrimaryCtxRelease, true)
      PORTCHECK_EXPORT_SYM(cuCtxGetCurrent, true)
      PORTCHECK_EXPORT_SYM(cuCtxSetCurrent, true)
      PORTCHECK_EXPORT_SYM(cuCtxSynchronize, true)
      PORTCHECK_EXPORT_SYM(cuStreamSynchronize, true)
      PORTCHECK_EXPORT_SYM(cuModuleLoadData, true)
      PORTCHECK_EXPORT_SYM(cuModuleUnload, true)
      PORTCHECK_EXPORT_SYM(cuModuleGetFunction, true)
      PORTCHECK_EXPORT_SYM(cuFuncSetAttribute, true)
      PORTCHECK_EXPORT_SYM(cuLaunchKernel, true)
      PORTCHECK_EXPORT_SYM(cuLaunchKernelEx, false)
      PORTCHECK_EXPORT_SYM(cuMemAlloc, true)
      PORTCHECK_EXPORT_SYM(cuMemFree, true)
      PORTCHECK_EXPORT_SYM(cuMemcpyHtoD, true)
      PORTCHECK_EXPORT_SYM(cuMemcpyDtoH, true)
      PORTCHECK_EXPORT_SYM(cuMemsetD8, true)
#undef PORTCHECK_EXPORT_SYM
      const CUresult init = cuInit(0);
      if (init != CUDA_SUCCESS) {
        const char* text = nullptr;
        cuGetErrorString(init, &text);
        fail(init, "cuInit failed: ", text != nullptr ? text : "unknown error");
        return;
      }
      status = CUDA_SUCCESS;
    }

   private:
    void fail(CUresult code, const char* what, const char* detail) noexcept {
      status = code;
      std::snprintf(message, sizeof message, "%s%s", what, detail != nullptr ? detail : "");
    }
  };

  // The process's one table, opened (and cuInit called) on first use; thread-safe.
  inline const CudaDriver& cuda_driver() noexcept {
    static const CudaDriver driver = [] {
      CudaDriver d;
      d.open();
      return d;
    }();
    return driver;
  }

  // Text for an error code of a launcher or of the driver, also when the driver did not load.
  inline const char* error_string(CUresult code) noexcept {
    const CudaDriver& d = cuda_driver();
    if (!d.ok() && code == d.status) return d.message;
    const char* text = nullptr;
    if (d.cuGetErrorString != nullptr && d.cuGetErrorString(code, &text) == CUDA_SUCCESS &&
        text != nullptr)
      return text;
    return "unknown CUDA error";
  }

  }       // namespace portcheck_export
#endif  // PORTCHECK_EXPORT_CUDA_DRIVER_V1
)CPP";

constexpr const char* kHipDriver = R"CPP(
#ifndef PORTCHECK_EXPORT_HIP_DRIVER_V1
#define PORTCHECK_EXPORT_HIP_DRIVER_V1
#if defined(__has_include)
#if __has_include(<hip/hip_runtime_api.h>)
#include <hip/hip_runtime_api.h>
#define PORTCHECK_EXPORT_HAVE_HIP_HEADERS 1
#endif
#endif
  namespace portcheck_export {

  // The few HIP types the launcher needs: HIP's own when its headers are installed, otherwise
  // stand-ins of the same size and calling convention (HIP's module API is plain C).
  namespace hip_api {
#ifdef PORTCHECK_EXPORT_HAVE_HIP_HEADERS
  using error_t = ::hipError_t;
  using module_t = ::hipModule_t;
  using function_t = ::hipFunction_t;
  using stream_t = ::hipStream_t;
  using deviceptr_t = ::hipDeviceptr_t;
#else
  using error_t = int;
  using module_t = struct ihipModule_t*;
  using function_t = struct ihipModuleSymbol_t*;
  using stream_t = struct ihipStream_t*;
  using deviceptr_t = void*;
#endif
  inline constexpr error_t success = static_cast<error_t>(0);
  inline constexpr error_t error_invalid_value = static_cast<error_t>(1);
  inline constexpr error_t error_not_initialized = static_cast<error_t>(3);
  inline constexpr error_t error_shared_object_init_failed = static_cast<error_t>(303);
  inline constexpr error_t error_not_found = static_cast<error_t>(500);
  inline constexpr error_t error_not_supported = static_cast<error_t>(801);
  }  // namespace hip_api

  // libamdhip64.so, opened at run time: a program using these headers links without -lamdhip64.
  struct HipDriver {
    using error_t = hip_api::error_t;
    void* handle = nullptr;
    error_t status = hip_api::error_not_initialized;  // of dlopen, dlsym and hipInit(0)
    char message[256] = {};
    error_t (*hipInit)(unsigned int) = nullptr;
    const char* (*hipGetErrorString)(error_t) = nullptr;
    error_t (*hipGetDeviceCount)(int*) = nullptr;
    error_t (*hipSetDevice)(int) = nullptr;
    error_t (*hipDeviceSynchronize)() = nullptr;
    error_t (*hipStreamSynchronize)(hip_api::stream_t) = nullptr;
    error_t (*hipModuleLoadData)(hip_api::module_t*, const void*) = nullptr;
    error_t (*hipModuleUnload)(hip_api::module_t) = nullptr;
    error_t (*hipModuleGetFunction)(hip_api::function_t*, hip_api::module_t, const char*) = nullptr;
    error_t (*hipModuleLaunchKernel)(hip_api::function_t, unsigned int, unsigned int, unsigned int,
                                     unsigned int, unsigned int, unsigned int, unsigned int,
                                     hip_api::stream_t, void**, void**) = nullptr;
    error_t (*hipMalloc)(void**, std::size_t) = nullptr;
    error_t (*hipFree)(void*) = nullptr;
    error_t (*hipMemcpyHtoD)(hip_api::deviceptr_t, void*, std::size_t) = nullptr;
    error_t (*hipMemcpyDtoH)(void*, hip_api::deviceptr_t, std::size_t) = nullptr;

    bool ok() const noexcept { return status == hip_api::success; }

    void open() noexcept {
      const char* names[] = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"};
      for (const char* name : names) {
        handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (handle != nullptr) break;
      }
      if (handle == nullptr) {
        fail(hip_api::error_shared_object_init_failed, "cannot dlopen libamdhip64.so: ", ::dlerror());
        return;
      }
#define PORTCHECK_EXPORT_SYM(member)                                          \
    member = reinterpret_cast<decltype(member)>(::dlsym(handle, #member));      \
    if (member == nullptr) {                                                    \
      fail(hip_api::error_not_found, "libamdhip64.so has no symbol ", #member); \
      return;                                                                   \
    }
      PORTCHECK_EXPORT_SYM(hipInit)
      PORTCHECK_EXPORT_SYM(hipGetErrorString)
      PORTCHECK_EXPORT_SYM(hipGetDeviceCount)
      PORTCHECK_EXPORT_SYM(hipSetDevice)
      PORTCHECK_EXPORT_SYM(hipDeviceSynchronize)
      PORTCHECK_EXPORT_SYM(hipStreamSynchronize)
      PORTCHECK_EXPORT_SYM(hipModuleLoadData)
      PORTCHECK_EXPORT_SYM(hipModuleUnload)
      PORTCHECK_EXPORT_SYM(hipModuleGetFunction)
      PORTCHECK_EXPORT_SYM(hipModuleLaunchKernel)
      PORTCHECK_EXPORT_SYM(hipMalloc)
      PORTCHECK_EXPORT_SYM(hipFree)
      PORTCHECK_EXPORT_SYM(hipMemcpyHtoD)
      PORTCHECK_EXPORT_SYM(hipMemcpyDtoH)
#undef PORTCHECK_EXPORT_SYM
      const error_t init = hipInit(0);
      if (init != hip_api::success) {
        const char* text = hipGetErrorString(init);
        fail(init, "hipInit failed: ", text != nullptr ? text : "unknown error");
        return;
      }
      status = hip_api::success;
    }

   private:
    void fail(error_t code, const char* what, const char* detail) noexcept {
      status = code;
      std::snprintf(message, sizeof message, "%s%s", what, detail != nullptr ? detail : "");
    }
  };

  inline const HipDriver& hip_driver() noexcept {
    static const HipDriver driver = [] {
      HipDriver d;
      d.open();
      return d;
    }();
    return driver;
  }

  inline const char* hip_error_string(hip_api::error_t code) noexcept {
    const HipDriver& d = hip_driver();
    if (!d.ok() && code == d.status) return d.message;
    const char* text = d.hipGetErrorString != nullptr ? d.hipGetErrorString(code) : nullptr;
    return text != nullptr ? text : "unknown HIP error";
  }

  }       // namespace portcheck_export
#endif  // PORTCHECK_EXPORT_HIP_DRIVER_V1
)CPP";

struct Info {
  bool hip = false;
  std::string row, kernel, target, entry, triton_version, binary_name, struct_name;
  std::uint64_t num_warps = 0, warp_size = 0, threads = 0, shared = 0, num_ctas = 1;
  std::uint64_t cluster[3] = {1, 1, 1};
  std::uint64_t gs_size = 0, gs_align = 1, ps_size = 0, ps_align = 1;
  bool launch_pdl = false, cooperative = false;
  std::size_t binary_size = 0;
  std::vector<Param> params;
};

Info read_info(const json& d, const std::vector<unsigned char>& binary) {
  Info info;
  const auto version = uint_field(d, "descriptor_version", 0);
  if (version != 1) bad("descriptor_version " + std::to_string(version) + " is not 1");
  const auto backend = string_field(d, "backend");
  if (backend != "cuda" && backend != "hip") bad("unknown backend \"" + backend + "\"");
  info.hip = backend == "hip";
  info.target = string_field(d, "target");
  info.kernel =
      d.contains("kernel") && d["kernel"].is_string() ? d["kernel"].get<std::string>() : "";
  info.row = d.contains("row") && d["row"].is_string() ? d["row"].get<std::string>() : info.kernel;
  info.entry = string_field(d, "entry");
  if (info.entry.empty()) bad("\"entry\" is empty");
  info.triton_version = d.value("triton_version", std::string("?"));
  info.binary_name = d.value("binary", std::string("?"));
  info.struct_name = launcher_struct_name(d);
  info.num_warps = uint_field(d, "num_warps", 0);
  info.warp_size = uint_field(d, "warp_size", info.hip ? 64 : 32);
  info.threads = uint_field(d, "threads_per_block", info.num_warps * info.warp_size);
  if (info.threads == 0 || info.threads > 0xFFFFFFFFu) bad("threads_per_block must be 1 .. 2^32-1");
  info.shared = uint_field(d, "shared_bytes", 0);
  if (info.shared > 0xFFFFFFFFu) bad("shared_bytes does not fit in 32 bits");
  info.num_ctas = uint_field(d, "num_ctas", 1);
  if (info.num_ctas == 0 || info.num_ctas > 0xFFFFFFFFu) bad("num_ctas must be at least 1");
  info.cluster[0] = info.num_ctas;
  if (d.contains("cluster_dims") && d["cluster_dims"].is_array() && d["cluster_dims"].size() == 3) {
    std::uint64_t dims[3];
    for (int i = 0; i < 3; ++i) {
      const auto& v = d["cluster_dims"][i];
      dims[i] = v.is_number_integer() && v.get<std::int64_t>() > 0 ? v.get<std::uint64_t>() : 0;
    }
    // Taken only when consistent with num_ctas, as Triton's launcher clusters along x.
    if (dims[0] > 0 && dims[1] > 0 && dims[2] > 0 && dims[0] * dims[1] * dims[2] == info.num_ctas)
      for (int i = 0; i < 3; ++i) info.cluster[i] = dims[i];
  }
  if (d.contains("global_scratch")) {
    info.gs_size = uint_field(d["global_scratch"], "size", 0);
    info.gs_align = std::max<std::uint64_t>(1, uint_field(d["global_scratch"], "align", 1));
  }
  if (d.contains("profile_scratch")) {
    info.ps_size = uint_field(d["profile_scratch"], "size", 0);
    info.ps_align = std::max<std::uint64_t>(1, uint_field(d["profile_scratch"], "align", 1));
  }
  info.launch_pdl = bool_field(d, "launch_pdl");
  info.cooperative = bool_field(d, "launch_cooperative_grid");
  info.params = read_params(d, info.hip);
  if (binary.empty()) bad("the binary is empty");
  info.binary_size = binary.size();
  if (info.hip && info.num_ctas != 1) bad("num_ctas > 1 on a HIP target");
  return info;
}

void write_preamble(std::ostringstream& out, const json& d, const Info& info) {
  out << "// Generated by triton-portcheck export. Do not edit: export again instead.\n";
  out << "// portcheck-export: row=" << comment_text(info.row)
      << " target=" << comment_text(info.target) << " struct=portcheck_export::" << info.struct_name
      << "\n";
  out << "//\n";
  out << "// Kernel " << comment_text(info.kernel) << " (row " << comment_text(info.row) << ") for "
      << comment_text(info.target) << ", compiled by Triton " << comment_text(info.triton_version)
      << "; entry symbol " << comment_text(info.entry) << ", binary "
      << comment_text(info.binary_name) << " (" << info.binary_size << " bytes embedded below).\n";
  out << "// " << info.num_warps << " warps of " << info.warp_size << " = " << info.threads
      << " threads per block, " << info.shared << " bytes of dynamic shared memory, num_ctas "
      << info.num_ctas << ".\n";
  if (d.contains("folded") && d["folded"].is_array() && !d["folded"].empty()) {
    out << "// Folded into the binary at compile time (a launch must use these values):\n";
    for (const auto& f : d["folded"]) {
      if (!f.is_object()) continue;
      out << "//   " << comment_text(json_scalar_text(f.value("name", json("?")))) << " = "
          << comment_text(json_scalar_text(f.value("value", json(nullptr))));
      if (f.contains("reason")) out << "  (" << comment_text(json_scalar_text(f["reason"])) << ")";
      out << "\n";
    }
  }
  if (d.contains("grid") && d["grid"].is_string())
    out << "// Grid: " << comment_text(d["grid"].get<std::string>()) << "\n";
  out << "// Usage: make a context current, then\n"
      << "//   portcheck_export::" << info.struct_name << " k;\n"
      << "//   " << (info.hip ? "hip_api::error_t" : "CUresult") << " r = k.load();"
      << "  // or let the first launch() load it\n"
      << "//   r = k.launch(stream, programs_x, programs_y, programs_z";
  for (const auto& p : info.params)
    if (p.kind == "argument") out << ", " << p.name;
  out << ");\n";
  out << "// Every call returns the driver's error code"
      << (info.hip ? " (hip_error_string() names it)" : " (error_string() names it)")
      << "; nothing exits or throws.\n";
  out << "// Requires C++17.\n";
  out << "#pragma once\n\n";
  if (!info.hip) out << "#include <cuda.h>\n";
  out << "#include <dlfcn.h>\n\n#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n";
}

std::string scratch_ptr_local(const std::string& kind) {
  return kind == "global_scratch" ? "global_scratch_ptr_" : "profile_scratch_ptr_";
}

void write_struct(std::ostringstream& out, const Info& info,
                  const std::vector<unsigned char>& binary) {
  const bool hip = info.hip;
  const std::string R = hip ? "hip_api::error_t" : "CUresult";
  const std::string OK = hip ? "hip_api::success" : "CUDA_SUCCESS";
  const std::string ptr_t = hip ? "hip_api::deviceptr_t" : "CUdeviceptr";
  const std::string drv = hip ? "hip_driver()" : "cuda_driver()";
  const std::string S = info.struct_name;
  std::size_t num_args = 0;
  for (const auto& p : info.params) num_args += p.kind == "argument";

  out << "\nnamespace portcheck_export {\n\n";
  out << "class " << S << " {\n public:\n";
  out << "  static constexpr const char* row = " << literal(info.row) << ";\n";
  out << "  static constexpr const char* kernel = " << literal(info.kernel) << ";\n";
  out << "  static constexpr const char* target = " << literal(info.target) << ";\n";
  out << "  static constexpr const char* entry = " << literal(info.entry) << ";\n";
  out << "  static constexpr const char* triton_version = " << literal(info.triton_version)
      << ";\n";
  out << "  static constexpr unsigned num_warps = " << info.num_warps << ";\n";
  out << "  static constexpr unsigned threads_per_block = " << info.threads << ";\n";
  out << "  static constexpr unsigned shared_bytes = " << info.shared << ";\n";
  out << "  static constexpr unsigned num_ctas = " << info.num_ctas << ";\n";
  out << "  static constexpr std::size_t global_scratch_size = " << info.gs_size << ";\n";
  out << "  static constexpr std::size_t global_scratch_align = " << info.gs_align << ";\n";
  out << "  static constexpr std::size_t profile_scratch_size = " << info.ps_size << ";\n";
  out << "  static constexpr std::size_t profile_scratch_align = " << info.ps_align << ";\n";
  out << "  static constexpr std::size_t num_params = " << info.params.size()
      << ";  // in the binary, scratch pointers included\n";
  out << "  static constexpr std::size_t num_arguments = " << num_args
      << ";  // of launch() after the grid\n";
  out << "  static constexpr std::size_t image_size = " << binary.size() << ";\n";
  out << "  // The " << (hip ? "hsaco" : "cubin") << ", byte for byte.\n";
  out << "  alignas(64) static constexpr unsigned char image[" << binary.size() << "] = {\n";
  write_bytes(out, binary);
  out << "  };\n\n";

  out << "  " << S << "() = default;\n";
  out << "  " << S << "(const " << S << "&) = delete;\n";
  out << "  " << S << "& operator=(const " << S << "&) = delete;\n";
  out << "  ~" << S << "() { unload(); }\n\n";

  // load()
  out << "  // Loads the image into the current " << (hip ? "device" : "context")
      << " and finds the entry. Idempotent.\n";
  out << "  " << R << " load() noexcept {\n";
  out << "    if (function_ != nullptr) return " << OK << ";\n";
  out << "    const auto& d = " << drv << ";\n";
  out << "    if (!d.ok()) return d.status;\n";
  if (!hip) {
    out << "    CUcontext context = nullptr;\n";
    out << "    CUresult r = d.cuCtxGetCurrent(&context);\n";
    out << "    if (r != CUDA_SUCCESS) return r;\n";
    out << "    if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;\n";
    out << "    CUmodule module = nullptr;\n";
    out << "    r = d.cuModuleLoadData(&module, image);\n";
    out << "    if (r != CUDA_SUCCESS) return r;\n";
    out << "    CUfunction function = nullptr;\n";
    out << "    r = d.cuModuleGetFunction(&function, module, entry);\n";
    if (info.shared > 49152) {
      out << "    // More than 48 KiB of dynamic shared memory must be allowed first.\n";
      out << "    if (r == CUDA_SUCCESS)\n";
      out << "      r = d.cuFuncSetAttribute(function, "
             "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,\n";
      out << "                               static_cast<int>(shared_bytes));\n";
    }
    if (info.num_ctas == 16) {
      out << "    // A cluster of 16 is non-portable: it must be allowed explicitly (as Triton "
             "does).\n";
      out << "    if (r == CUDA_SUCCESS)\n";
      out << "      r = d.cuFuncSetAttribute(function, "
             "CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);\n";
    }
    out << "    if (r != CUDA_SUCCESS) {\n";
    out << "      d.cuModuleUnload(module);\n";
    out << "      return r;\n";
    out << "    }\n";
  } else {
    out << "    hip_api::module_t module = nullptr;\n";
    out << "    " << R << " r = d.hipModuleLoadData(&module, image);\n";
    out << "    if (r != hip_api::success) return r;\n";
    out << "    hip_api::function_t function = nullptr;\n";
    out << "    r = d.hipModuleGetFunction(&function, module, entry);\n";
    out << "    if (r != hip_api::success) {\n";
    out << "      d.hipModuleUnload(module);\n";
    out << "      return r;\n";
    out << "    }\n";
  }
  out << "    module_ = module;\n";
  out << "    function_ = function;\n";
  out << "    return " << OK << ";\n";
  out << "  }\n\n";

  // launch()
  out << "  // Launches programs_x x programs_y x programs_z programs (Triton's grid) on "
         "`stream`.\n";
  out << "  // Loads first when load() was not called. An empty grid launches nothing.\n";
  out << "  // Parameters after the grid, in the kernel's order:\n";
  for (const auto& p : info.params) {
    if (p.kind != "argument") continue;
    out << "  //   " << p.name << ": " << comment_text(p.triton_type.empty() ? "?" : p.triton_type);
    if (p.name != p.original) out << " (argument " << comment_text(p.original) << ")";
    out << "\n";
  }
  if (info.gs_size > 0 || info.ps_size > 0)
    out << "  // Scratch memory is allocated here, kept for the next launches and grown when a "
           "larger\n"
           "  // grid needs more (growing first synchronises the context: launches in flight may "
           "use it).\n";
  out << "  " << R << " launch(" << (hip ? "hip_api::stream_t" : "CUstream")
      << " stream, unsigned programs_x, unsigned programs_y, unsigned programs_z";
  for (const auto& p : info.params)
    if (p.kind == "argument") out << ",\n         " << p.cpp_type << " " << p.name;
  out << ") noexcept {\n";
  out << "    " << R << " r_ = this->load();\n";
  out << "    if (r_ != " << OK << ") return r_;\n";
  out << "    if (programs_x == 0 || programs_y == 0 || programs_z == 0) return " << OK << ";\n";
  out << "    const auto& d_ = " << drv << ";\n";
  if (info.num_ctas > 1) {
    out << "    if (programs_x > 0xFFFFFFFFu / " << S
        << "::num_ctas) return CUDA_ERROR_INVALID_VALUE;\n";
  }
  for (const auto& p : info.params) {
    if (p.kind == "argument") continue;
    const bool global = p.kind == "global_scratch";
    const auto size = global ? info.gs_size : info.ps_size;
    out << "    " << ptr_t << " " << scratch_ptr_local(p.kind) << " = " << (hip ? "nullptr" : "0")
        << ";\n";
    if (size > 0) {
      const std::string prefix = global ? "global" : "profile";
      out << "    r_ = this->reserve_scratch_(this->" << prefix << "_scratch_, this->" << prefix
          << "_scratch_bytes_, " << S << "::" << prefix << "_scratch_size, " << S << "::" << prefix
          << "_scratch_align, programs_x, programs_y, programs_z, &" << scratch_ptr_local(p.kind)
          << ");\n";
      out << "    if (r_ != " << OK << ") return r_;\n";
    }
  }
  out << "    void* params_[] = {";
  for (std::size_t i = 0; i < info.params.size(); ++i) {
    const auto& p = info.params[i];
    out << (i ? ", " : "") << "&" << (p.kind == "argument" ? p.name : scratch_ptr_local(p.kind));
  }
  if (info.params.empty()) out << "nullptr";
  out << "};\n";
  if (hip) {
    out << "    return d_.hipModuleLaunchKernel(this->function_, programs_x * " << S
        << "::num_ctas, programs_y,\n"
        << "                                    programs_z, " << S << "::threads_per_block, 1, 1, "
        << S << "::shared_bytes, stream, " << (info.params.empty() ? "nullptr" : "params_")
        << ", nullptr);\n";
  } else if (info.num_ctas == 1 && !info.launch_pdl && !info.cooperative) {
    out << "    return d_.cuLaunchKernel(this->function_, programs_x * " << S
        << "::num_ctas, programs_y,\n"
        << "                             programs_z, " << S << "::threads_per_block, 1, 1, " << S
        << "::shared_bytes, stream, " << (info.params.empty() ? "nullptr" : "params_")
        << ", nullptr);\n";
  } else {
    out << "    if (d_.cuLaunchKernelEx == nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // driver "
           "older than CUDA 12\n";
    out << "    CUlaunchAttribute attributes_[4] = {};\n";
    out << "    unsigned num_attributes_ = 0;\n";
    if (info.launch_pdl) {
      out << "    attributes_[num_attributes_].id = "
             "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;\n";
      out << "    attributes_[num_attributes_++].value.programmaticStreamSerializationAllowed = "
             "1;\n";
    }
    if (info.cooperative) {
      out << "    attributes_[num_attributes_].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;\n";
      out << "    attributes_[num_attributes_++].value.cooperative = 1;\n";
    }
    if (info.num_ctas > 1) {
      out << "    // One cluster of num_ctas blocks per program, spread over the GPU (as Triton "
             "launches it).\n";
      out << "    attributes_[num_attributes_].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;\n";
      out << "    attributes_[num_attributes_].value.clusterDim.x = " << info.cluster[0] << ";\n";
      out << "    attributes_[num_attributes_].value.clusterDim.y = " << info.cluster[1] << ";\n";
      out << "    attributes_[num_attributes_++].value.clusterDim.z = " << info.cluster[2] << ";\n";
      out << "    attributes_[num_attributes_].id = "
             "CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;\n";
      out << "    attributes_[num_attributes_++].value.clusterSchedulingPolicyPreference = "
             "CU_CLUSTER_SCHEDULING_POLICY_SPREAD;\n";
    }
    out << "    CUlaunchConfig config_ = {};\n";
    out << "    config_.gridDimX = programs_x * " << S << "::num_ctas;\n";
    out << "    config_.gridDimY = programs_y;\n";
    out << "    config_.gridDimZ = programs_z;\n";
    out << "    config_.blockDimX = " << S << "::threads_per_block;\n";
    out << "    config_.blockDimY = 1;\n";
    out << "    config_.blockDimZ = 1;\n";
    out << "    config_.sharedMemBytes = " << S << "::shared_bytes;\n";
    out << "    config_.hStream = stream;\n";
    out << "    config_.attrs = attributes_;\n";
    out << "    config_.numAttrs = num_attributes_;\n";
    out << "    return d_.cuLaunchKernelEx(&config_, this->function_, "
        << (info.params.empty() ? "nullptr" : "params_") << ", nullptr);\n";
  }
  out << "  }\n\n";

  // unload()
  out << "  // Frees the scratch buffers and unloads the module (in the current context). "
         "Idempotent.\n";
  out << "  void unload() noexcept {\n";
  out << "    if (function_ == nullptr && module_ == nullptr && global_scratch_bytes_ == 0 &&\n"
         "        profile_scratch_bytes_ == 0)\n"
         "      return;\n";
  out << "    const auto& d = " << drv << ";\n";
  out << "    if (d.ok()) {\n";
  if (!hip) {
    out << "      if (global_scratch_bytes_ != 0) d.cuMemFree(global_scratch_);\n";
    out << "      if (profile_scratch_bytes_ != 0) d.cuMemFree(profile_scratch_);\n";
    out << "      if (module_ != nullptr) d.cuModuleUnload(module_);\n";
  } else {
    out << "      if (global_scratch_bytes_ != 0) d.hipFree(global_scratch_);\n";
    out << "      if (profile_scratch_bytes_ != 0) d.hipFree(profile_scratch_);\n";
    out << "      if (module_ != nullptr) d.hipModuleUnload(module_);\n";
  }
  out << "    }\n";
  out << "    global_scratch_ = " << (hip ? "nullptr" : "0") << ";\n";
  out << "    profile_scratch_ = " << (hip ? "nullptr" : "0") << ";\n";
  out << "    global_scratch_bytes_ = profile_scratch_bytes_ = 0;\n";
  out << "    module_ = nullptr;\n";
  out << "    function_ = nullptr;\n";
  out << "  }\n\n";

  out << "  bool loaded() const noexcept { return function_ != nullptr; }\n";
  out << "  " << (hip ? "hip_api::function_t" : "CUfunction")
      << " function() const noexcept { return function_; }\n";
  out << "  " << (hip ? "hip_api::module_t" : "CUmodule")
      << " module() const noexcept { return module_; }\n\n";

  out << " private:\n";
  // reserve_scratch_
  out << "  // Makes `buffer` hold at least programs * num_ctas * size bytes (plus slack for an "
         "alignment\n"
         "  // above the allocator's 256 bytes) and returns the aligned start in *out.\n";
  out << "  " << R << " reserve_scratch_(" << ptr_t
      << "& buffer, std::size_t& bytes, std::size_t size,\n"
      << "                          std::size_t align, unsigned programs_x, unsigned programs_y,\n"
      << "                          unsigned programs_z, " << ptr_t << "* out) noexcept {\n";
  out << "    const std::uint64_t programs = std::uint64_t{programs_x} * programs_y * programs_z * "
         "num_ctas;\n";
  out << "    if (programs > UINT64_MAX / size) return "
      << (hip ? "hip_api::error_invalid_value" : "CUDA_ERROR_INVALID_VALUE") << ";\n";
  out << "    const std::uint64_t slack = align > 256 ? align - 1 : 0;\n";
  out << "    const std::uint64_t need = programs * size + slack;\n";
  out << "    const auto& d = " << drv << ";\n";
  out << "    if (need > bytes) {\n";
  if (!hip) {
    out << "      if (bytes != 0) {\n";
    out << "        CUresult r = d.cuCtxSynchronize();\n";
    out << "        if (r == CUDA_SUCCESS) r = d.cuMemFree(buffer);\n";
    out << "        if (r != CUDA_SUCCESS) return r;\n";
    out << "        buffer = 0;\n";
    out << "        bytes = 0;\n";
    out << "      }\n";
    out << "      CUdeviceptr fresh = 0;\n";
    out << "      const CUresult r = d.cuMemAlloc(&fresh, static_cast<std::size_t>(need));\n";
    out << "      if (r != CUDA_SUCCESS) return r;\n";
  } else {
    out << "      if (bytes != 0) {\n";
    out << "        hip_api::error_t r = d.hipDeviceSynchronize();\n";
    out << "        if (r == hip_api::success) r = d.hipFree(buffer);\n";
    out << "        if (r != hip_api::success) return r;\n";
    out << "        buffer = nullptr;\n";
    out << "        bytes = 0;\n";
    out << "      }\n";
    out << "      void* fresh = nullptr;\n";
    out << "      const hip_api::error_t r = d.hipMalloc(&fresh, "
           "static_cast<std::size_t>(need));\n";
    out << "      if (r != hip_api::success) return r;\n";
  }
  out << "      buffer = fresh;\n";
  out << "      bytes = static_cast<std::size_t>(need);\n";
  out << "    }\n";
  if (!hip) {
    out << "    *out = (buffer + (align - 1)) / align * align;\n";
  } else {
    out << "    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(buffer);\n";
    out << "    *out = reinterpret_cast<void*>((start + (align - 1)) / align * align);\n";
  }
  out << "    return " << OK << ";\n";
  out << "  }\n\n";

  out << "  " << (hip ? "hip_api::module_t" : "CUmodule") << " module_ = nullptr;\n";
  out << "  " << (hip ? "hip_api::function_t" : "CUfunction") << " function_ = nullptr;\n";
  out << "  " << ptr_t << " global_scratch_ = " << (hip ? "nullptr" : "0") << ";\n";
  out << "  std::size_t global_scratch_bytes_ = 0;\n";
  out << "  " << ptr_t << " profile_scratch_ = " << (hip ? "nullptr" : "0") << ";\n";
  out << "  std::size_t profile_scratch_bytes_ = 0;\n";
  out << "};\n\n";
  out << "}  // namespace portcheck_export\n";
}

}  // namespace

std::string export_identifier(std::string_view text) {
  std::string out;
  bool pending = false;
  for (const char c : text) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum) {
      pending = !out.empty();
      continue;
    }
    if (pending) out += '_';
    pending = false;
    out += c;
  }
  if (out.empty()) return "kernel";
  if (out[0] >= '0' && out[0] <= '9') out = "k" + out;
  return out;
}

std::string launcher_struct_name(const nlohmann::json& descriptor) {
  std::string row;
  if (descriptor.is_object() && descriptor.contains("row") && descriptor["row"].is_string())
    row = descriptor["row"].get<std::string>();
  if (row.empty()) row = string_field(descriptor, "kernel");
  return export_identifier(row) + "_" + export_identifier(string_field(descriptor, "target"));
}

std::string render_launcher_header(const nlohmann::json& descriptor,
                                   const std::vector<unsigned char>& binary) {
  const Info info = read_info(descriptor, binary);
  std::ostringstream preamble;
  write_preamble(preamble, descriptor, info);
  std::ostringstream out;
  out << preamble.str();
  out << (info.hip ? kHipDriver : kCudaDriver);
  write_struct(out, info, binary);
  return out.str();
}

}  // namespace portcheck
