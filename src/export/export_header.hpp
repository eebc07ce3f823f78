#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

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

// "dot_small[int8]" -> "dot_small_int8": every run of characters other than ASCII letters and
// digits becomes one '_', leading and trailing '_' are dropped, a leading digit gets "k" before
// it, and an empty result is "kernel".
std::string export_identifier(std::string_view text);

// The generated struct's name inside namespace portcheck_export: "<row>_<target>", each part
// sanitised, e.g. "axpy_cuda_90", "dot_small_int8_hip_gfx942". The row is the descriptor's
// "row" (falling back to "kernel").
std::string launcher_struct_name(const nlohmann::json& descriptor);

}  // namespace portcheck
