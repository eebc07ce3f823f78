#include "src/export/launcher_drivers.hpp"

#include <array>
#include <stdexcept>

#include "util/enum_table.hpp"

namespace portcheck {
namespace {

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

constexpr auto kDriverApis = std::to_array<DriverApi>({
    {.value = Backend::cuda,
     .result = "CUresult",
     .success = "CUDA_SUCCESS",
     .invalid_value = "CUDA_ERROR_INVALID_VALUE",
     .deviceptr = "CUdeviceptr",
     .null_deviceptr = "0",
     .stream = "CUstream",
     .module = "CUmodule",
     .function = "CUfunction",
     .free = "cuMemFree",
     .unload = "cuModuleUnload",
     .driver = "cuda_driver()",
     .error_string = "error_string()",
     .image = "cubin",
     .loads_into = "context",
     .include = "#include <cuda.h>\n",
     .table = kCudaDriver},
    {.value = Backend::hip,
     .result = "hip_api::error_t",
     .success = "hip_api::success",
     .invalid_value = "hip_api::error_invalid_value",
     .deviceptr = "hip_api::deviceptr_t",
     .null_deviceptr = "nullptr",
     .stream = "hip_api::stream_t",
     .module = "hip_api::module_t",
     .function = "hip_api::function_t",
     .free = "hipFree",
     .unload = "hipModuleUnload",
     .driver = "hip_driver()",
     .error_string = "hip_error_string()",
     .image = "hsaco",
     .loads_into = "device",
     .include = "",  // its driver table includes HIP's header when there is one
     .table = kHipDriver},
});

}  // namespace

const DriverApi& driver_api(Backend backend) {
  const auto* api = util::row_of(kDriverApis, backend.id());
  if (api == nullptr)
    throw std::logic_error("no launcher driver for backend " + std::string(backend.name()));
  return *api;
}

}  // namespace portcheck
