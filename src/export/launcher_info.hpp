#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/target.hpp"

namespace portcheck {

// One parameter of the kernel's binary, in order.
struct LauncherParam {
  std::string kind;      // argument | global_scratch | profile_scratch
  std::string name;      // C++ identifier (arguments only)
  std::string original;  // name in the descriptor
  std::string cpp_type;
  std::string triton_type;
  [[nodiscard]] bool is_argument() const { return kind == "argument"; }
};

// What the launcher header is rendered from: launch.json (descriptor_version 1) read, checked and
// given its defaults.
struct LauncherInfo {
  Backend backend = Backend::cuda;
  std::string row, kernel, target, entry, triton_version, binary_name, struct_name;
  std::uint64_t num_warps = 0, warp_size = 0, threads = 0, shared = 0, num_ctas = 1;
  std::uint64_t cluster[3] = {1, 1, 1};
  std::uint64_t gs_size = 0, gs_align = 1, ps_size = 0, ps_align = 1;  // global/profile scratch
  bool launch_pdl = false, cooperative = false;
  std::size_t binary_size = 0;
  std::vector<LauncherParam> params;
  [[nodiscard]] std::size_t num_arguments() const;
};

// Throws std::invalid_argument ("launch descriptor: ...") on a descriptor the header cannot be
// rendered from: a missing field, an unknown backend, parameter kind or c_type, an empty binary.
LauncherInfo read_launcher_info(const nlohmann::json& descriptor,
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
