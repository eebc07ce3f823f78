#include "src/core/cell_answer.hpp"

#include "util/json_reader.hpp"

namespace portcheck {
namespace {

using nlohmann::json;

// Each converter below runs on a value the schema has checked: a member it reads is there, of
// its type, and optional only where the schema says so. One table per object names its counts
// once, for the reader and the writer alike.

template <typename Table, typename Struct>
void read_counts(const json& in, Struct& out, const Table& table) {
  for (const auto& [key, member] : table)
    out.*member = util::optional_member<std::int64_t>(in, key);
}

KernelMetadata read_metadata(const json& m) {
  KernelMetadata out;
  out.name = util::optional_member<std::string>(m, "name");
  out.hash = util::optional_member<std::string>(m, "hash");
  read_counts(m, out, kMetadataCounts);
  out.cluster_dims = util::optional_member<std::vector<std::int64_t>>(m, "cluster_dims");
  if (const auto it = m.find("target"); it != m.end() && !it->is_null()) {
    const auto& arch = it->at("arch");
    out.target = KernelMetadata::Target{
        it->at("backend").get<std::string>(),
        arch.is_string() ? KernelMetadata::Target::Arch(arch.get<std::string>())
                         : KernelMetadata::Target::Arch(arch.get<std::int64_t>()),
        it->at("warp_size").get<std::int64_t>()};
  }
  out.triton_version = util::optional_member<std::string>(m, "triton_version");
  return out;
}

KernelResources read_resources(const json& r) {
  KernelResources out;
  read_counts(r, out, kResourceCounts);
  out.error = util::optional_member<std::string>(r, "error");
  return out;
}

AutotunerAnswer read_autotuner(const json& a) {
  return {a.at("skips").get<bool>(), a.at("raises").get<std::string>()};
}

LaunchVerdict read_launch(const json& l) {
  LaunchVerdict out;
  out.needs = l.at("needs").get<std::map<std::string, std::uint64_t>>();
  out.problems = l.at("problems").get<std::vector<std::string>>();
  out.exceeded = util::optional_member<std::vector<std::string>>(l, "exceeded");
  if (const auto it = l.find("autotuner"); it != l.end()) out.autotuner = read_autotuner(*it);
  return out;
}

ExportFiles read_export(const json& e) {
  ExportFiles out;
  out.directory = e.at("directory").get<std::string>();
  out.binary = e.at("binary").get<std::string>();
  out.assembly = e.at("assembly").get<std::string>();
  for (const auto& p : e.at("params"))
    out.params.push_back({p.at("name").get<std::string>(), p.at("kind").get<std::string>(),
                          p.at("triton_type").get<std::string>(),
                          util::optional_member<bool>(p, "divisible_by_16")});
  for (const auto& f : e.at("folded"))
    out.folded.push_back(
        {f.at("name").get<std::string>(), f.at("value"), f.at("reason").get<std::string>()});
  const auto& l = e.at("launch");
  out.launch = {l.at("threads_per_block").get<std::uint64_t>(),
                l.at("shared_bytes").get<std::uint64_t>(), l.at("num_ctas").get<std::uint64_t>(),
                util::optional_member<std::uint64_t>(l, "tensor_memory_columns"),
                l.at("needs_shared_opt_in").get<bool>()};
  return out;
}

ReproducerText read_repro(const json& r) {
  ReproducerText out;
  out.text = util::optional_member<std::string>(r, "text");
  out.lines = util::optional_member<std::int64_t>(r, "lines");
  out.imports_module = util::optional_member<bool>(r, "imports_module");
  out.blockers = util::optional_member<std::vector<std::string>>(r, "blockers");
  if (const auto it = r.find("shrink"); it != r.end() && !it->is_null())
    out.shrink =
        ShrinkFigures{it->at("before_lines").get<std::int64_t>(),
                      it->at("after_lines").get<std::int64_t>(), it->at("seconds").get<double>(),
                      it->at("candidates").get<std::int64_t>(), it->at("note").get<std::string>()};
  out.error = util::optional_member<std::string>(r, "error");
  return out;
}

std::optional<SourceLocation> read_location(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  return SourceLocation{it->at("file").get<std::string>(), it->at("line").get<int>()};
}

json location_json(const SourceLocation& at) { return {{"file", at.file}, {"line", at.line}}; }

// The members a failure and a compile share (cell_failure's, and compile_success's of them).
void read_compile_facts(const json& m, CellAnswer& out) {
  out.stages = m.at("stages").get<std::map<std::string, double>>();
  out.compile_s = util::optional_member<double>(m, "compile_s");
  out.source = read_location(m, "source");
  out.ttir_key = util::optional_member<std::string>(m, "ttir_key");
  out.shared_with = util::optional_member<std::string>(m, "shared_with");
  out.saved_ir = util::optional_member<std::vector<std::string>>(m, "saved_ir");
}

void read_failure(const json& m, CellAnswer& out) {
  out.stage = m.at("stage").get<std::string>();
  const auto& e = m.at("error");
  out.error = FailureError{e.at("type").get<std::string>(), e.at("message").get<std::string>(),
                           e.at("traceback").get<std::string>()};
  out.error_source = read_location(m, "error_source");
  if (const auto it = m.find("autotuner"); it != m.end()) out.autotuner = read_autotuner(*it);
}

void read_compiled(const json& m, CellAnswer& out) {
  out.metadata = read_metadata(m.at("metadata"));
  out.resources = read_resources(m.at("resources"));
  if (const auto it = m.find("launch"); it != m.end()) out.launch = read_launch(*it);
}

void read_compile_success(const json& m, CellAnswer& out) {
  read_compile_facts(m, out);
  read_compiled(m, out);
  out.sizes = m.at("sizes").get<std::map<std::string, std::uint64_t>>();
  if (const auto it = m.find("export"); it != m.end()) out.exported = read_export(*it);
  if (const auto it = m.find("output_error"); it != m.end())
    out.output_error = CellAnswer::OutputError{it->at("path").get<std::string>(),
                                               it->at("error").get<std::string>()};
}

void write_compile_facts(const CellAnswer& a, json& out, bool source_required) {
  out["stages"] = a.stages;
  util::put_optional(out, "compile_s", a.compile_s);
  if (a.source)
    out["source"] = location_json(*a.source);
  else if (source_required)
    out["source"] = nullptr;
  util::put_optional(out, "ttir_key", a.ttir_key);
  util::put_optional(out, "shared_with", a.shared_with);
  util::put_optional(out, "saved_ir", a.saved_ir);
}

json failure_message(const CellAnswer& a) {
  json out = {{"status", "error"}, {"stage", a.stage}};
  if (a.error)
    out["error"] = {
        {"type", a.error->type}, {"message", a.error->message}, {"traceback", a.error->traceback}};
  if (a.kind == "reproducer_result") {
    util::put_optional(out, "triton_version", a.triton_version);
    return out;
  }
  write_compile_facts(a, out, false);
  if (a.error_source) out["error_source"] = location_json(*a.error_source);
  if (a.autotuner) out["autotuner"] = to_json(*a.autotuner);
  return out;
}

json success_message(const CellAnswer& a) {
  json out = {{"status", "ok"}};
  if (a.kind == "repro_answer") {
    if (a.repro) out["repro"] = to_json(*a.repro);
    return out;
  }
  if (a.metadata) out["metadata"] = to_json(*a.metadata);
  if (a.resources) out["resources"] = to_json(*a.resources);
  if (a.launch) out["launch"] = to_json(*a.launch);
  if (a.kind == "reproducer_result") {
    util::put_optional(out, "triton_version", a.triton_version);
    return out;
  }
  write_compile_facts(a, out, true);
  util::put_optional(out, "sizes", a.sizes);
  if (a.exported) out["export"] = to_json(*a.exported);
  if (a.output_error)
    out["output_error"] = {{"path", a.output_error->path}, {"error", a.output_error->error}};
  return out;
}

}  // namespace

json CellAnswer::message() const { return ok ? success_message(*this) : failure_message(*this); }

CellAnswer convert_checked_answer(std::string_view kind, const json& message) {
  CellAnswer out;
  out.kind = std::string(kind);
  out.ok = message.at("status").get<std::string>() == "ok";
  out.triton_version = util::optional_member<std::string>(message, "triton_version");
  if (!out.ok) {
    read_failure(message, out);
    if (kind != "reproducer_result") read_compile_facts(message, out);
  } else if (kind == "repro_answer") {
    out.repro = read_repro(message.at("repro"));
  } else if (kind == "reproducer_result") {
    read_compiled(message, out);
  } else {
    read_compile_success(message, out);
  }
  return out;
}

}  // namespace portcheck
