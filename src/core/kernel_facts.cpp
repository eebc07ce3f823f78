#include "src/core/kernel_facts.hpp"

#include "util/json_reader.hpp"

namespace portcheck {

using nlohmann::json;

const std::array<MetadataCount, 11> kMetadataCounts{{
    {"num_warps", &KernelMetadata::num_warps},
    {"num_ctas", &KernelMetadata::num_ctas},
    {"num_stages", &KernelMetadata::num_stages},
    {"shared", &KernelMetadata::shared},
    {"tmem_size", &KernelMetadata::tmem_size},
    {"global_scratch_size", &KernelMetadata::global_scratch_size},
    {"global_scratch_align", &KernelMetadata::global_scratch_align},
    {"profile_scratch_size", &KernelMetadata::profile_scratch_size},
    {"profile_scratch_align", &KernelMetadata::profile_scratch_align},
    {"maxnreg", &KernelMetadata::maxnreg},
    {"warp_size", &KernelMetadata::warp_size},
}};

const std::array<ResourceCount, 10> kResourceCounts{{
    {"registers", &KernelResources::registers},
    {"stack_bytes", &KernelResources::stack_bytes},
    {"local_bytes", &KernelResources::local_bytes},
    {"static_shared_bytes", &KernelResources::static_shared_bytes},
    {"vgprs", &KernelResources::vgprs},
    {"sgprs", &KernelResources::sgprs},
    {"vgpr_spills", &KernelResources::vgpr_spills},
    {"sgpr_spills", &KernelResources::sgpr_spills},
    {"lds_bytes", &KernelResources::lds_bytes},
    {"scratch_bytes", &KernelResources::scratch_bytes},
}};

namespace {

template <typename Table, typename Struct>
void write_counts(json& out, const Struct& in, const Table& table) {
  for (const auto& [key, member] : table) util::put_optional(out, key, in.*member);
}

}  // namespace

json to_json(const KernelMetadata& m) {
  json out = json::object();
  util::put_optional(out, "name", m.name);
  util::put_optional(out, "hash", m.hash);
  write_counts(out, m, kMetadataCounts);
  util::put_optional(out, "cluster_dims", m.cluster_dims);
  if (m.target)
    out["target"] = {{"backend", m.target->backend},
                     {"arch", std::visit([](const auto& a) { return json(a); }, m.target->arch)},
                     {"warp_size", m.target->warp_size}};
  util::put_optional(out, "triton_version", m.triton_version);
  return out;
}

json to_json(const KernelResources& r) {
  json out = json::object();
  write_counts(out, r, kResourceCounts);
  util::put_optional(out, "error", r.error);
  return out;
}

json to_json(const AutotunerAnswer& a) { return {{"skips", a.skips}, {"raises", a.raises}}; }

json to_json(const LaunchVerdict& l) {
  json out = {{"needs", l.needs}, {"problems", l.problems}};
  util::put_optional(out, "exceeded", l.exceeded);
  if (l.autotuner) out["autotuner"] = to_json(*l.autotuner);
  return out;
}

json to_json(const ExportFiles& e) {
  json params = json::array();
  for (const auto& p : e.params) {
    json param = {{"name", p.name}, {"kind", p.kind}, {"triton_type", p.triton_type}};
    util::put_optional(param, "divisible_by_16", p.divisible_by_16);
    params.push_back(std::move(param));
  }
  json folded = json::array();
  for (const auto& f : e.folded)
    folded.push_back({{"name", f.name}, {"value", f.value}, {"reason", f.reason}});
  json launch = {{"threads_per_block", e.launch.threads_per_block},
                 {"shared_bytes", e.launch.shared_bytes},
                 {"num_ctas", e.launch.num_ctas},
                 {"needs_shared_opt_in", e.launch.needs_shared_opt_in}};
  util::put_optional(launch, "tensor_memory_columns", e.launch.tensor_memory_columns);
  return {{"directory", e.directory},    {"binary", e.binary},
          {"assembly", e.assembly},      {"params", std::move(params)},
          {"folded", std::move(folded)}, {"launch", std::move(launch)}};
}

json to_json(const ReproducerText& r) {
  json out = json::object();
  util::put_optional(out, "text", r.text);
  util::put_optional(out, "lines", r.lines);
  util::put_optional(out, "imports_module", r.imports_module);
  util::put_optional(out, "blockers", r.blockers);
  if (r.shrink)
    out["shrink"] = {{"before_lines", r.shrink->before_lines},
                     {"after_lines", r.shrink->after_lines},
                     {"seconds", r.shrink->seconds},
                     {"candidates", r.shrink->candidates},
                     {"note", r.shrink->note}};
  util::put_optional(out, "error", r.error);
  return out;
}

}  // namespace portcheck
