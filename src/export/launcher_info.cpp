#include "src/export/launcher_info.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "src/export/launcher_drivers.hpp"

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

// A descriptor export wrote holds the warp size; one without it gets the target's.
std::uint64_t warp_size_of(const json& d, const std::string& target_name) {
  if (d.is_object() && d.contains("warp_size")) return uint_field(d, "warp_size", 0);
  std::string error;
  const auto target = parse_target(target_name, &error);
  if (!target) bad("no \"warp_size\", and " + error);
  return static_cast<std::uint64_t>(target->warp_size);
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

// The type launch() takes for a parameter of C type `c_type`; empty for one it cannot pass.
std::string cpp_type_for(const std::string& c_type, const DriverApi& api) {
  if (c_type == "CUdeviceptr" || c_type == "hipDeviceptr_t") return std::string(api.deviceptr);
  static const std::set<std::string> ints = {"int8_t",  "int16_t",  "int32_t",  "int64_t",
                                             "uint8_t", "uint16_t", "uint32_t", "uint64_t"};
  if (ints.contains(c_type)) return "std::" + c_type;
  if (c_type == "float" || c_type == "double") return c_type;
  return "";
}

std::vector<LauncherParam> read_params(const json& d, const DriverApi& api) {
  const auto& list = field(d, "params");
  if (!list.is_array()) bad("\"params\" is not a list");
  std::vector<LauncherParam> params;
  std::set<std::string> used;
  bool seen_global = false;
  bool seen_profile = false;
  for (const auto& p : list) {
    LauncherParam param;
    param.kind = p.is_object() ? p.value("kind", std::string("argument")) : "";
    param.original = p.is_object() ? p.value("name", std::string()) : "";
    param.triton_type = p.is_object() ? p.value("triton_type", std::string()) : "";
    const std::string c_type = p.is_object() ? p.value("c_type", std::string()) : "";
    if (param.kind == "global_scratch" || param.kind == "profile_scratch") {
      bool& seen = param.kind == "global_scratch" ? seen_global : seen_profile;
      if (seen) bad("two \"" + param.kind + "\" parameters");
      seen = true;
      param.cpp_type = api.deviceptr;
    } else if (param.kind == "argument") {
      param.cpp_type = cpp_type_for(c_type, api);
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

}  // namespace

std::size_t LauncherInfo::num_arguments() const {
  return static_cast<std::size_t>(
      std::count_if(params.begin(), params.end(), [](const auto& p) { return p.is_argument(); }));
}

LauncherInfo read_launcher_info(const json& d, const std::vector<unsigned char>& binary) {
  LauncherInfo info;
  const auto version = uint_field(d, "descriptor_version", 0);
  if (version != 1) bad("descriptor_version " + std::to_string(version) + " is not 1");
  const auto backend_name = string_field(d, "backend");
  const auto backend = Backend::named(backend_name);
  if (!backend) bad("unknown backend \"" + backend_name + "\"");
  info.backend = *backend;
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
  info.warp_size = warp_size_of(d, info.target);
  // The descriptor says it (the worker's launch rules counted it): never counted again here.
  info.threads = uint_field(d, "threads_per_block", 0);
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
  info.params = read_params(d, driver_api(info.backend));
  if (binary.empty()) bad("the binary is empty");
  info.binary_size = binary.size();
  if (info.backend == Backend::hip && info.num_ctas != 1) bad("num_ctas > 1 on a HIP target");
  return info;
}

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

}  // namespace portcheck
