#include "src/check/worker_session.hpp"

#include <chrono>

#include "src/run/fork_server.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/supervisor.hpp"
#include "src/run/worker_channels.hpp"

namespace portcheck {
namespace {

// --isolation fork: the server answers the probe itself, so the run imports Triton only once.
class ForkServerSession final : public WorkerSession {
 public:
  explicit ForkServerSession(const WorkerSessionConfig& config)
      : runner_([&] {
          ForkServerConfig server;
          server.argv = {config.python, "-m", std::string(channels::kWorkerModule),
                         std::string(channels::kServeCommand)};
          server.env = config.env;
          server.cwd = std::filesystem::current_path();
          server.log_dir = config.run_dir;
          server.warm_targets = config.warm_targets;
          server.max_server_rss_bytes = config.worker_max_rss_bytes;
          server.jobs = config.jobs;
          return server;
        }()) {}

  ProbeAnswer probe(const nlohmann::json& request) override {
    return runner_.probe(request, std::chrono::seconds(300));
  }
  ProcessRunner& runner() override { return runner_; }
  void prewarm() override { runner_.prewarm(); }
  [[nodiscard]] WorkerStats stats() const override {
    const auto& s = runner_.stats();
    WorkerStats out;
    out.servers_started = s.servers_started;
    out.cells_retried = s.cells_retried;
    out.warm_up_seconds = s.warm_up_seconds;
    out.zygotes_started = s.zygotes_started;
    out.zygotes_unusable = s.zygotes_unusable;
    out.zygotes_retired = s.zygotes_retired;
    out.zygote_import_seconds = s.zygote_import_seconds;
    out.batches = s.batches;
    out.cells_in_batches = s.cells_in_batches;
    out.cells_left_by_batches = s.cells_left_by_batches;
    out.cells_returned_by_batches = s.cells_returned_by_batches;
    return out;
  }

 private:
  ForkServerRunner runner_;
};

// --isolation process: a fresh interpreter for the probe and for every cell.
class ProcessSession final : public WorkerSession {
 public:
  explicit ProcessSession(const WorkerSessionConfig& config) : config_(config) {}

  ProbeAnswer probe(const nlohmann::json& request) override {
    return probe_environment(config_.python, config_.share, config_.run_dir, request);
  }
  ProcessRunner& runner() override { return supervisor_; }

 private:
  WorkerSessionConfig config_;
  Supervisor supervisor_;
};

}  // namespace

std::unique_ptr<WorkerSession> start_worker_session(const WorkerSessionConfig& config) {
  if (config.isolation == Isolation::fork) return std::make_unique<ForkServerSession>(config);
  return std::make_unique<ProcessSession>(config);
}

}  // namespace portcheck
