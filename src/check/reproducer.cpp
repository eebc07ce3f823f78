#include "src/check/reproducer.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/check/interpret.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/run/cell_answer_read.hpp"
#include "src/run/scratch_dir.hpp"
#include "src/run/supervisor.hpp"
#include "src/run/worker_protocol.hpp"
#include "src/versions/pip_steps.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

constexpr std::string_view kHeaderMark = "# portcheck-repro: ";
// The header is written near the top; a file whose first lines lack it is not a reproducer.
constexpr int kHeaderSearchLines = 200;

std::string required_string(const nlohmann::json& header, const std::string& key,
                            const std::string& where) {
  const auto it = header.find(key);
  if (it == header.end() || !it->is_string() || it->get<std::string>().empty())
    throw UsageError(fmt::format("{}: key '{}': expected a non-empty string", where, key));
  return it->get<std::string>();
}

// null or absent: the cell had no such limit in the file (it did not run into it).
bool absent(const nlohmann::json& header, const std::string& key) {
  const auto it = header.find(key);
  return it == header.end() || it->is_null();
}

// A time limit the supervisor can enforce, as check's --timeout and a manifest's timeout are.
std::optional<double> time_limit(const nlohmann::json& header, const std::string& where) {
  if (absent(header, "time_limit_s")) return std::nullopt;
  const auto& value = header["time_limit_s"];
  if (!value.is_number())
    throw UsageError(fmt::format("{}: key 'time_limit_s': expected a number of seconds", where));
  const auto seconds = value.get<double>();
  if (const auto problem = timeout_problem(seconds); !problem.empty())
    throw UsageError(fmt::format("{}: key 'time_limit_s': {}", where, problem));
  return seconds;
}

std::optional<std::uint64_t> memory_limit(const nlohmann::json& header, const std::string& where) {
  if (absent(header, "max_rss_bytes")) return std::nullopt;
  const auto& value = header["max_rss_bytes"];
  if (!value.is_number_unsigned() || value.get<std::uint64_t>() == 0)
    throw UsageError(
        fmt::format("{}: key 'max_rss_bytes': expected a positive whole number of bytes", where));
  return value.get<std::uint64_t>();
}

ReproducerHeader parse_header(const std::string& text, const std::string& where) {
  const auto header = nlohmann::json::parse(text, nullptr, false);
  if (!header.is_object())
    throw UsageError(fmt::format("{}: the portcheck-repro line is not a JSON object", where));
  ReproducerHeader h;
  h.fingerprint = required_string(header, "fingerprint", where);
  h.kind = required_string(header, "kind", where);
  h.stage = required_string(header, "stage", where);
  h.triton_version = required_string(header, "triton_version", where);
  std::string error;
  const auto target = parse_target(required_string(header, "target", where), &error);
  if (!target) throw UsageError(fmt::format("{}: key 'target': {}", where, error));
  h.target = *target;
  h.time_limit_s = time_limit(header, where);
  h.max_rss_bytes = memory_limit(header, where);
  // A limit the cell ran into is what the file reproduces: without it the run would have none.
  if (h.kind == to_string(FailureKind::timeout) && !h.time_limit_s)
    throw UsageError(fmt::format(
        "{}: key 'time_limit_s': a reproducer of a timeout needs the cell's time limit", where));
  if (h.kind == to_string(FailureKind::oom) && !h.max_rss_bytes)
    throw UsageError(fmt::format(
        "{}: key 'max_rss_bytes': a reproducer of an oom needs the cell's memory limit", where));
  return h;
}

// The verdict of the run against the recorded one. A timeout is the same timeout in whatever
// stage the limit strikes: how far a compile gets in its time depends on the machine's load.
Reproduction compare(const CellResult& cell, const ReproducerHeader& header) {
  if (cell.kind == FailureKind::none) return Reproduction::fixed;
  if (header.kind == to_string(FailureKind::timeout))
    return cell.kind == FailureKind::timeout ? Reproduction::same : Reproduction::differs;
  return cell.fingerprint == header.fingerprint ? Reproduction::same : Reproduction::differs;
}

ProcessOutcome run_to_end(const ProcessSpec& spec, const std::atomic<bool>* interrupted) {
  Supervisor supervisor;
  supervisor.start(0, spec);
  std::vector<std::pair<ProcessRunner::Id, ProcessOutcome>> ended;
  while (ended.empty()) {
    if (interrupted != nullptr && interrupted->load())
      return supervisor.cancel_all().front().second;
    ended = supervisor.wait(std::chrono::milliseconds(200));
  }
  return ended.front().second;
}

}  // namespace

ReproducerHeader read_reproducer(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw UsageError(fmt::format("{}: cannot read the reproducer", file.string()));
  std::string line;
  for (int number = 1; number <= kHeaderSearchLines && std::getline(in, line); ++number)
    if (line.starts_with(kHeaderMark))
      return parse_header(line.substr(kHeaderMark.size()),
                          fmt::format("{}:{}", file.string(), number));
  throw UsageError(fmt::format(
      "{}: not a reproducer written by `triton-portcheck repro` (no '# portcheck-repro:' line)",
      file.string()));
}

ReproducerRun run_reproducer(const std::filesystem::path& file, const ReproducerHeader& header,
                             const std::string& python, const std::string& label,
                             const std::filesystem::path& data, double default_timeout_s,
                             const std::atomic<bool>* interrupted) {
  ScratchDir scratch("triton-portcheck-repro");
  const auto folder = scratch.path() / "run";  // empty: the file runs as it would anywhere
  std::filesystem::create_directories(folder);
  const auto result_path = scratch.path() / "result.json";
  const auto progress_path = scratch.path() / "progress";
  ProcessSpec spec;
  spec.argv = {python,       std::filesystem::absolute(file).string(),
               "--result",   result_path.string(),
               "--progress", progress_path.string()};
  spec.env = child_environment();
  spec.env.push_back(scratch.marker());
  spec.cwd = folder;
  spec.stdout_path = scratch.path() / "stdout";
  spec.stderr_path = scratch.path() / "stderr";
  const double limit = header.time_limit_s.value_or(default_timeout_s);
  spec.timeout = std::chrono::milliseconds(static_cast<long long>(std::ceil(limit * 1000)));
  spec.max_rss_bytes = header.max_rss_bytes.value_or(0);  // an oom cell's, judged as check does

  CellEvidence evidence;
  evidence.outcome = run_to_end(spec, interrupted);
  if (const auto text = util::read_file_bounded(result_path, 1 << 24))
    if (auto json = nlohmann::json::parse(*text, nullptr, false); !json.is_discarded()) {
      auto read = try_read_cell_answer("reproducer_result", json);
      evidence.result = std::move(read.value);
      if (!evidence.result)
        evidence.protocol_problem = fmt::format(
            "the reproducer's result breaks protocol {}: {} (a reproducer edited, or written by "
            "another version of triton-portcheck: write it again with `triton-portcheck repro`)",
            worker_protocol_version(), read.problem);
    }
  evidence.last_stage =
      last_stage_from_progress(util::read_file_bounded(progress_path, 1 << 16).value_or(""));
  evidence.stderr_text = util::read_file_bounded(spec.stderr_path, kCellLogLimit).value_or("");

  KernelRow row;
  row.kernel = file.filename().string();
  PlannedCell planned;
  planned.row = &row;
  planned.target = header.target;
  planned.label = label;
  Judgement judgement;
  judgement.triton_version = evidence.result ? evidence.result->triton_version.value_or("") : "";
  judgement.known = KnownFailures::load(data / "known-failures.toml");
  judgement.launch_limits = LaunchLimits::load(data / "launch-limits.toml");
  ReproducerRun run;
  run.cell = interpret(planned, CellInput{evidence, std::nullopt, false, {}}, judgement);
  run.cell.kernel = row.kernel;
  run.reproduction = compare(run.cell, header);
  return run;
}

std::string describe(const ReproducerRun& run, const ReproducerHeader& header) {
  const auto& cell = run.cell;
  switch (run.reproduction) {
    case Reproduction::same:
      return fmt::format("reproduces {} ({} in {})", header.fingerprint, to_string(cell.kind),
                         cell.stage);
    case Reproduction::fixed:
      return "no longer reproduces: it compiles";
    case Reproduction::differs:
      break;
  }
  return fmt::format("fails differently: {} in {} [{}]: {} (recorded: {} in {} [{}])",
                     to_string(cell.kind), cell.stage, cell.fingerprint, cell.message, header.kind,
                     header.stage, header.fingerprint);
}

}  // namespace portcheck
