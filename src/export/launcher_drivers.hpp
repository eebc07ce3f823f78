#pragma once
#include <string_view>

#include "src/core/target.hpp"

namespace portcheck {

// How the generated launcher spells one backend's driver API, and the driver table it embeds.
// The launcher's text is the same for every backend where these words are all that differ; it
// branches on the backend only where the code itself differs (load, scratch growth, launch).
struct DriverApi {
  Backend::Id value;
  std::string_view result;          // a call's error code: "CUresult"
  std::string_view success;         // "CUDA_SUCCESS"
  std::string_view invalid_value;   // "CUDA_ERROR_INVALID_VALUE"
  std::string_view deviceptr;       // a device address: "CUdeviceptr"
  std::string_view null_deviceptr;  // "0"
  std::string_view stream;          // "CUstream"
  std::string_view module;          // "CUmodule"
  std::string_view function;        // "CUfunction"
  std::string_view free;            // the driver's member that frees device memory: "cuMemFree"
  std::string_view unload;          // and unloads a module: "cuModuleUnload"
  std::string_view driver;          // the generated accessor of the table: "cuda_driver()"
  std::string_view error_string;    // what names an error code: "error_string()"
  std::string_view image;           // what the embedded binary is: "cubin"
  std::string_view loads_into;      // where load() puts it: "context"
  std::string_view include;         // what the header includes for the driver's types
  // The driver table: the driver opened with dlopen at run time, its functions, error_string().
  // Guarded, so that several generated headers can be included in one translation unit.
  std::string_view table;
};

const DriverApi& driver_api(Backend backend);

}  // namespace portcheck
