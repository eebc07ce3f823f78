#include "src/export/export.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "src/export/export_header.hpp"
#include "util/fs.hpp"
#include "util/text_cursor.hpp"

namespace portcheck {

std::string c_type_for(const std::string& triton_type, Backend backend) {
  if (triton_type.starts_with("*"))
    return backend == Backend::hip ? "hipDeviceptr_t" : "CUdeviceptr";
  static const std::map<std::string, std::string> scalars = {
      {"i1", "int8_t"},    {"i8", "int8_t"},    {"i16", "int16_t"},   {"i32", "int32_t"},
      {"i64", "int64_t"},  {"u1", "uint8_t"},   {"u8", "uint8_t"},    {"u16", "uint16_t"},
      {"u32", "uint32_t"}, {"u64", "uint64_t"}, {"fp16", "uint16_t"}, {"bf16", "uint16_t"},
      {"fp32", "float"},   {"f32", "float"},    {"fp64", "double"}};
  const auto it = scalars.find(triton_type);
  return it == scalars.end() ? "" : it->second;
}

nlohmann::ordered_json launch_descriptor(const CellResult& cell) {
  const auto& md = cell.metadata;
  // The cell was compiled with export_dir (export_command.cpp): the worker's export_files is there.
  if (!cell.exported)
    throw std::logic_error(fmt::format("export of {} on {}: the worker wrote no export files",
                                       cell.kernel, cell.target));
  const auto& ex = *cell.exported;
  const auto target = checked_target(cell.target);
  const auto warps = md.num_warps.value_or(0);
  const auto warp_size = md.warp_size.value_or(target.warp_size);
  // How it launches: the worker's launch rules said it (export_files' launch, the schema's), the
  // rules every cell is judged by; nothing here counts threads or shared memory again.
  const auto& launch = ex.launch;
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  int index = 0;
  for (const auto& p : ex.params) {
    nlohmann::ordered_json param = {{"index", index++},
                                    {"name", p.name},
                                    {"kind", p.kind},
                                    {"c_type", c_type_for(p.triton_type, target.backend)},
                                    {"triton_type", p.triton_type}};
    if (p.divisible_by_16) param["divisible_by_16"] = *p.divisible_by_16;
    params.push_back(param);
  }
  nlohmann::ordered_json folded = nlohmann::ordered_json::array();
  for (const auto& f : ex.folded)
    folded.push_back({{"name", f.name}, {"value", f.value}, {"reason", f.reason}});
  // Ordered as a reader needs it: what to load, how to launch, what to pass.
  nlohmann::ordered_json descriptor = {
      {"descriptor_version", 1},
      {"kernel", cell.base_kernel},
      {"row", cell.kernel},
      {"function", md.name.value_or("")},
      {"target", cell.target},
      {"backend", std::string(target.backend.name())},
      {"arch", target.arch},
      {"triton_version", cell.triton_version},
      {"entry", md.name.value_or("")},
      {"binary", ex.binary},
      {"assembly", ex.assembly},
      {"num_warps", warps},
      {"warp_size", warp_size},
      {"threads_per_block", launch.threads_per_block},
      {"shared_bytes", launch.shared_bytes},
      {"needs_shared_opt_in", launch.needs_shared_opt_in},
      {"num_ctas", launch.num_ctas},
      {"cluster_dims", {launch.num_ctas, 1, 1}},
      // An unset scratch count (absent, or null in the metadata) is the fallback the worker's
      // launch rules use.
      {"global_scratch",
       {{"size", md.global_scratch_size.value_or(0)},
        {"align", md.global_scratch_align.value_or(1)}}},
      {"profile_scratch",
       {{"size", md.profile_scratch_size.value_or(0)},
        {"align", md.profile_scratch_align.value_or(1)}}},
      {"params", params},
      {"folded", folded},
      {"grid",
       "blocks = (programs_x * num_ctas, programs_y, programs_z); block = (threads_per_block, 1, "
       "1); "
       "scratch buffers, when size > 0, are programs_x * programs_y * programs_z * num_ctas * size "
       "bytes"},
  };
  if (cell.launch.is_object()) descriptor["launch_limits"] = nlohmann::ordered_json(cell.launch);
  return descriptor;
}

namespace {

// The parameter list of the first `.entry <blanks> NAME <blanks> ( ... )` in the PTX. Scanned by
// hand: std::regex recursed once per character of the list and crashed (SIGSEGV) on a long one.
std::optional<std::string_view> entry_parameters(std::string_view ptx, std::string_view entry) {
  constexpr std::string_view kEntry = ".entry";
  for (auto at = ptx.find(kEntry); at != std::string_view::npos; at = ptx.find(kEntry, at + 1)) {
    util::TextCursor c(ptx, at + kEntry.size());
    if (!c.take_blanks() || !c.take(entry)) continue;
    c.take_blanks();
    if (!c.take("(")) continue;
    const auto list = c.rest();
    const auto close = list.find(')');
    if (close != std::string_view::npos) return list.substr(0, close);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> ptx_parameter_count(const std::string& ptx, const std::string& entry) {
  const auto body = entry_parameters(ptx, entry);
  if (!body) return std::nullopt;
  std::size_t count = 0;
  for (std::size_t pos = 0; (pos = body->find(".param", pos)) != std::string_view::npos; pos += 6)
    ++count;
  return count;
}

std::vector<std::string> write_export(const CellResult& cell) {
  const auto ordered = launch_descriptor(cell);
  const auto descriptor = nlohmann::json::parse(ordered.dump());
  const std::filesystem::path dir = cell.exported->directory;  // launch_descriptor checked it
  if (checked_target(cell.target).backend == Backend::cuda) {
    const auto ptx = util::read_file(dir / descriptor["assembly"].get<std::string>());
    const auto count = ptx_parameter_count(ptx, descriptor["entry"].get<std::string>());
    if (!count || *count != descriptor["params"].size())
      throw EnvironmentError(
          fmt::format("export of {} on {}: the PTX entry declares {} parameters, the "
                      "descriptor {}: please report this",
                      cell.kernel, cell.target, count ? std::to_string(*count) : "no",
                      descriptor["params"].size()));
  }
  const auto binary_text = util::read_file(dir / descriptor["binary"].get<std::string>());
  const std::vector<unsigned char> binary(binary_text.begin(), binary_text.end());
  const auto descriptor_path = dir / "launch.json";
  util::atomic_write_file(descriptor_path, ordered.dump(2) + "\n");
  const auto header_path = dir / "launcher.h";
  util::atomic_write_file(header_path, render_launcher_header(descriptor, binary));
  return {(dir / descriptor["binary"].get<std::string>()).string(),
          (dir / descriptor["assembly"].get<std::string>()).string(), descriptor_path.string(),
          header_path.string()};
}

}  // namespace portcheck
