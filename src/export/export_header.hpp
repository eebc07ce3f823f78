#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/export/launcher_info.hpp"  // export_identifier, launcher_struct_name

namespace portcheck {

// The C++ header of `triton-portcheck export`: one self-contained file per kernel x target that
// embeds the binary (cubin or hsaco) and declares `portcheck_export::<row>_<target>` with
//   load()    load the embedded image into the current context and find the entry symbol;
//   launch()  one typed parameter per kernel argument, in order, plus the grid in programs;
//   unload()  free the module and the cached scratch buffers (the destructor calls it).
// The driver (libcuda.so.1 or libamdhip64.so) is opened with dlopen at run time, so a program
// using the header links with -ldl only. Every call returns the driver's error code; nothing
// exits or throws. The generated code is C++17.
//
// `descriptor` is the launch.json written by export (descriptor_version 1); `binary` the bytes of
// the file it names. Throws std::invalid_argument on a descriptor it cannot render (missing
// field, unknown backend, parameter kind or c_type, empty binary).
std::string render_launcher_header(const nlohmann::json& descriptor,
                                   const std::vector<unsigned char>& binary);

}  // namespace portcheck
