#include "src/check/run_summary.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <ctime>

#include "util/iso_time.hpp"

namespace portcheck {
namespace {

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

std::uint64_t own_peak_rss_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

nlohmann::json options_block(const CheckOptions& options, const Manifest& manifest,
                             const Matrix& matrix, const PassSummary& pass) {
  return {{"manifest", pass.manifest},
          {"targets", matrix.columns},
          {"jobs", pass.jobs},
          {"timeout_s", options.timeout_s.value_or(manifest.timeout_s)},
          {"max_rss_bytes", options.max_rss_bytes.value_or(manifest.max_rss_bytes)},
          {"isolation", std::string(to_string(options.isolation))},
          {"save_ir", options.save_ir_dir
                          ? nlohmann::json(std::filesystem::absolute(*options.save_ir_dir).string())
                          : nlohmann::json(nullptr)},
          {"cache",
           pass.cache_root ? nlohmann::json(pass.cache_root->string()) : nlohmann::json(nullptr)}};
}

nlohmann::json resources_block(const ExecutedCells& executed) {
  return {{"tool_peak_rss_bytes", own_peak_rss_bytes()},
          {"workers_peak_rss_bytes", executed.workers_peak_rss_bytes},
          {"fork_servers_started", executed.worker_stats.servers_started},
          {"cells_retried", executed.worker_stats.cells_retried},
          {"warm_up_s", executed.worker_stats.warm_up_seconds},
          {"zygotes_started", executed.worker_stats.zygotes_started},
          {"zygotes_unusable", executed.worker_stats.zygotes_unusable},
          {"zygotes_retired", executed.worker_stats.zygotes_retired},
          {"zygote_import_s", executed.worker_stats.zygote_import_seconds},
          {"batches", executed.worker_stats.batches},
          {"cells_in_batches", executed.worker_stats.cells_in_batches},
          {"cells_left_by_batches", executed.worker_stats.cells_left_by_batches},
          {"cells_returned_by_batches", executed.worker_stats.cells_returned_by_batches},
          {"cells_rerun_fresh", executed.worker_stats.cells_rerun_fresh}};
}

}  // namespace

nlohmann::json environment_block(const CheckOptions& options, const Manifest& manifest,
                                 const Matrix& matrix, const ExecutedCells& executed,
                                 const PassSummary& pass) {
  const auto& probe = executed.probe;
  const auto& found = executed.static_result;
  return {
      {"triton",
       {{"label", pass.label}, {"version", executed.triton_version}, {"path", probe.triton_path}}},
      {"python", {{"version", probe.python_version}, {"executable", probe.python_executable}}},
      {"host", host_name()},
      {"started", util::iso_time_utc(pass.started)},
      {"gpu", nullptr},
      {"options", options_block(options, manifest, matrix, pass)},
      {"resources", resources_block(executed)},
      {"static", found ? nlohmann::json{{"seconds", found->seconds},
                                        {"mode", std::string(to_string(options.static_mode))}}
                       : nlohmann::json(nullptr)},
  };
}

}  // namespace portcheck
