// Tests of the check pipeline, plan -> execute -> interpret, with no Python and no Triton: a
// worker session whose probe answers from a script and whose runner is a FakeRunner that does
// what the Python worker does, writing result.json, progress and stderr into each cell's folder
// (for the module inspections as for the compiles). What is tested is ours: which cells are
// started, which are served from the cache or not compiled at all, and the verdicts.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "src/check/check_options.hpp"
#include "src/check/classify.hpp"
#include "src/check/execute.hpp"
#include "src/check/plan.hpp"
#include "src/check/reduce.hpp"
#include "src/core/errors.hpp"
#include "src/run/result_cache.hpp"
#include "src/run/worker_protocol.hpp"
#include "tests/unit/fake_runner.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

using Json = nlohmann::json;
using Id = ProcessRunner::Id;

// What one compile does in the fake worker: by default it exits 0 with a passing result.
struct Compile {
  ProcessOutcome outcome;
  std::optional<Json> result;
  std::string stderr_text;
  std::string last_stage = "cubin";
};

Json ok_result(int num_warps = 4) {
  return {{"status", "ok"},
          {"compile_s", 0.75},
          {"stages", {{"ttir", 0.25}, {"ttgir", 0.5}}},
          {"metadata", {{"num_warps", num_warps}, {"shared", 1024}}},
          {"sizes", Json::object()},
          {"source", nullptr},
          {"resources", Json::object()}};
}

Compile passes(int num_warps = 4) { return {ProcessOutcome{}, ok_result(num_warps), "", "cubin"}; }

Compile frontend_error(const std::string& message) {
  Json result = {{"status", "error"},
                 {"stage", "frontend"},
                 {"error",
                  {{"type", "CompilationError"},
                   {"message", message},
                   {"traceback", "Traceback (most recent call last):\n  ...\n" + message}}},
                 {"stages", Json::object()}};
  return {ProcessOutcome{}, result, "", "frontend"};
}

// Ended without a result: killed, lost or crashed.
Compile ended(Termination how, const std::string& stage, int signal = 0,
              const std::string& stderr_text = "") {
  ProcessOutcome outcome;
  outcome.how = how;
  outcome.signal = signal;
  return {outcome, std::nullopt, stderr_text, stage};
}

std::string target_name(const Json& target) {
  return target.at("backend").get<std::string>() + ":" + target.at("arch").get<std::string>();
}

KernelRow make_row(const std::string& kernel, const std::string& module,
                   const std::filesystem::path& root) {
  KernelRow row;
  row.kernel = kernel;
  row.ref.module = module;
  row.ref.function = kernel;
  row.ref.import_root = root;
  row.signature = {{"x", "*fp32"}, {"n", "i32"}};
  row.constants = {{"BLOCK", 128}};
  row.options = {{"num_warps", 4}};
  return row;
}

class CheckPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    manifest.file = tmp.path() / "portcheck.toml";
    manifest.targets = {"cuda:90", "hip:gfx942"};
    manifest.rows = {make_row("add", "kernels", tmp.path()), make_row("mul", "kernels", tmp.path()),
                     make_row("scan", "other", tmp.path())};
    std::filesystem::create_directories(tmp.path() / "data");
    util::atomic_write_file(tmp.path() / "data" / "launch-limits.toml",
                            "[cuda.defaults]\nmax_threads_per_block = 1024\n"
                            "[cuda.90]\nmax_shared_bytes_per_block = 232448\n");
    // A whole probe_answer: the session reads it as the real one is read (ProbeAnswer::read).
    probe_answer = {
        {"protocol", worker_protocol_version()},
        {"worker", "/worker"},
        {"python", {{"version", "3.11.2"}, {"executable", "/usr/bin/python3"}}},
        {"site_packages", Json::array()},
        {"static", nullptr},
        {"signal_guard_off", nullptr},
        {"triton", {{"version", "3.9.0"}, {"path", "/site-packages/triton"}, {"family", "3.9"}}},
        {"option_fields",
         {{"cuda", {"num_warps", "num_stages"}}, {"hip", {"num_warps", "waves_per_eu"}}}},
        {"targets",
         {{{"name", "cuda:90"}, {"backend", "cuda"}, {"arch", "90"}, {"warp_size", 32}},
          {{"name", "hip:gfx942"}, {"backend", "hip"}, {"arch", "gfx942"}, {"warp_size", 64}}}}};
    runner.ids_unique_for_life = false;  // the inspection and the cells share the runner
    runner.on_start = [this](FakeRunner& r, Id id, const ProcessSpec& spec) { work(r, id, spec); };
  }

  // One environment's pass, as run_check makes it, with this fixture's fake worker session.
  ExecutedCells run(const std::string& label = "current") {
    const auto matrix = plan_matrix(manifest, options.targets, "the manifest's text");
    ExecuteSettings settings;
    settings.session.python = "python-under-test";
    settings.session.run_dir = tmp.path() / ("run-" + std::to_string(++runs));
    std::filesystem::create_directories(settings.session.run_dir);
    settings.jobs = options.jobs == 0 ? 2 : options.jobs;
    settings.static_mode = options.static_mode;
    settings.launch_limits_warn = options.launch_limits_warn;
    settings.data = tmp.path() / "data";
    settings.unsupported_targets_are_cells = several_releases;
    ResultCache cache(tmp.path() / "cache", 64ULL << 20);
    TieredCache tiered(cache, nullptr, std::nullopt);
    CellTimings timings(tmp.path() / "timings.json");
    settings.cache = options.use_cache ? &tiered : nullptr;
    settings.timings = &timings;
    compiled.clear();
    inspected.clear();
    const WorkerSessionFactory factory = [this](const WorkerSessionConfig& config) {
      EXPECT_EQ(config.python, "python-under-test");
      return std::make_unique<FakeSession>(*this);
    };
    return execute(manifest, matrix, plan_environment(manifest, matrix, options, label), settings,
                   factory, interrupted);
  }

  static const CellResult& cell(const ExecutedCells& out, const std::string& row,
                                const std::string& target) {
    for (const auto& c : out.cells)
      if (c.kernel == row && c.target == target) return c;
    throw std::runtime_error("no cell " + row + " x " + target + " in the results");
  }

  [[nodiscard]] bool was_compiled(const std::string& row, const std::string& target) const {
    return std::count(compiled.begin(), compiled.end(), row + "|" + target) == 1;
  }

  util::TempDir tmp{"portcheck-pipeline-test"};
  Manifest manifest;
  CheckOptions options;
  FakeRunner runner;
  Json probe_answer;
  std::atomic<bool> interrupted{false};
  bool several_releases = false;  // as run_check sets it for `--triton A,B`

  // What the fake worker is told to do.
  std::map<std::string, Compile> compiles;      // "row|target" -> its compile (default: passes)
  std::map<std::string, Json> predictions;      // "row|target" -> the static pre-checks' verdict
  std::set<std::string> crashing_modules;       // modules whose import kills the process
  std::set<std::string> driver_asking_modules;  // modules whose import asks Triton's driver
  std::map<std::string, int> import_ticks;      // module -> wait()s its inspection takes (1)
  std::map<std::string, std::size_t> compile_started_at;  // "row|target" -> runner.wait_calls
  std::function<void(FakeRunner&, Id)> on_compile;

  // What it saw, per run.
  std::vector<std::string> compiled;            // "row|target" of every compile started
  std::map<std::string, Json> compile_request;  // "row|target" -> its request
  std::vector<Json> inspected;                  // every module inspection's request
  std::vector<Json> probe_requests;
  std::size_t sessions_started = 0;
  std::size_t sessions_alive = 0;
  int runs = 0;

 private:
  class FakeSession final : public WorkerSession {
   public:
    explicit FakeSession(CheckPipeline& test) : test_(test) {
      ++test_.sessions_started;
      ++test_.sessions_alive;
    }
    ~FakeSession() override { --test_.sessions_alive; }
    ProbeAnswer probe(const Json& request) override {
      test_.probe_requests.push_back(request);
      return ProbeAnswer::read(test_.probe_answer);
    }
    ProcessRunner& runner() override { return test_.runner; }

   private:
    CheckPipeline& test_;
  };

  // The fake worker: answers the process `spec` describes by writing its files.
  void work(FakeRunner& r, Id id, const ProcessSpec& spec) {
    const auto request = Json::parse(util::read_file(spec.request_path));
    // Every request the pipeline writes is what the protocol's schema defines for its kind.
    const auto kind = request.value("kind", "");
    EXPECT_EQ(protocol_problem(kind + "_request", request), std::nullopt);
    if (kind == "inspect") {
      const auto module = request.at("kernels").at(0).at("kernel").at("module").get<std::string>();
      if (const auto ticks = import_ticks.find(module); ticks != import_ticks.end())
        r.ticks[id] = ticks->second;
    }
    Compile answer = kind == "inspect" ? inspect(request) : compile(r, id, request);
    if (answer.result) util::atomic_write_file(spec.result_path, answer.result->dump());
    util::atomic_write_file(spec.progress_path, "stage " + answer.last_stage + "\n");
    util::atomic_write_file(spec.stderr_path, answer.stderr_text);
    r.outcomes[id] = answer.outcome;
  }

  Compile inspect(const Json& request) {
    inspected.push_back(request);
    const auto module = request.at("kernels").at(0).at("kernel").at("module").get<std::string>();
    if (crashing_modules.count(module) != 0)
      return ended(Termination::signaled, "import", SIGSEGV, "Segmentation fault at import\n");
    // Without a driver, a module whose import asks it cannot key its cells: the worker says so.
    const bool asked = request.at("keys").get<bool>() && !request.contains("target") &&
                       driver_asking_modules.count(module) != 0;
    Json answer = {{"status", "ok"},
                   {"kernels", Json::object()},
                   {"keys", Json::object()},
                   {"asked_driver", asked}};
    for (const auto& k : request.at("kernels"))
      answer["kernels"][k.at("id").get<std::string>()] = {
          {"ok", true}, {"args", {"x", "n", "BLOCK"}}, {"constexprs", {"BLOCK"}}};
    Json found = Json::object();
    for (const auto& c : request.at("cells")) {
      const auto id = std::to_string(c.at("id").get<std::size_t>());
      const auto& cell_request = c.at("request");
      if (request.contains("target")) EXPECT_EQ(cell_request.at("target"), request.at("target"));
      // As the real key: a hash of the whole request, its target's warp size included.
      if (asked)
        answer["keys"][id] = nullptr;
      else if (request.at("keys").get<bool>())
        answer["keys"][id] = util::sha1_hex(cell_request.dump());
      const auto name = cell_request.at("row_name").get<std::string>() + "|" +
                        target_name(cell_request.at("target"));
      if (const auto p = predictions.find(name); p != predictions.end()) found[id] = p->second;
    }
    answer["static"] = {{"cells", found},
                        {"tables", {{"libdevice", Json::object()}, {"fp8", Json::object()}}},
                        {"seconds", 0.125}};
    return {ProcessOutcome{}, answer, "", "import"};
  }

  Compile compile(FakeRunner& r, Id id, const Json& request) {
    const auto name =
        request.at("row_name").get<std::string>() + "|" + target_name(request.at("target"));
    compiled.push_back(name);
    compile_request[name] = request;
    compile_started_at[name] = r.wait_calls;
    if (on_compile) on_compile(r, id);
    const auto it = compiles.find(name);
    auto answer = it == compiles.end() ? passes() : it->second;
    judge_launch(request, answer);
    return answer;
  }

  // As the worker judges a compiled kernel against the limits its request carries
  // (python/portcheck_worker/compile/launch_rules.py), for threads per block only.
  static void judge_launch(const Json& request, Compile& answer) {
    if (!request.contains("launch_limits") || !answer.result ||
        answer.result->value("status", "") != "ok")
      return;
    // Read as the worker reads it: what is not a count (a damaged -1.5e300) counts as none.
    const auto warps = static_cast<int>(
        util::integer_member(answer.result->at("metadata"), "num_warps", 0, 1 << 16).value_or(0));
    const auto warp_size = request.at("target").at("warp_size").get<int>();
    Json verdict = {{"needs", {{"threads_per_block", warps * warp_size}}},
                    {"problems", Json::array()}};
    const auto limit = request.at("launch_limits").value("max_threads_per_block", 0);
    if (limit > 0 && warps * warp_size > limit)
      verdict["problems"].push_back(fmt::format(
          "needs {} threads per block ({} warps of {}); {} allows {}", warps * warp_size, warps,
          warp_size, target_name(request.at("target")), limit));
    (*answer.result)["launch"] = verdict;
  }
};

// --- plan -----------------------------------------------------------------------------------

TEST_F(CheckPipeline, PlanIsEveryRowTimesEveryTargetRowMajor) {
  const auto matrix = plan_matrix(manifest, {}, "text");
  EXPECT_EQ(matrix.columns, (std::vector<std::string>{"cuda:90", "hip:gfx942"}));
  const auto cells = plan_cells(manifest, matrix, options, "3.8.0");
  ASSERT_EQ(cells.size(), 6u);
  const std::vector<std::string> expected{"add|cuda:90",    "add|hip:gfx942", "mul|cuda:90",
                                          "mul|hip:gfx942", "scan|cuda:90",   "scan|hip:gfx942"};
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    EXPECT_EQ(c.row->display_name() + "|" + c.target.name(), expected[i]);
    EXPECT_EQ(c.index, i);
    EXPECT_EQ(c.label, "3.8.0");
    EXPECT_EQ(c.request.at("row_name"), c.row->display_name());
    EXPECT_EQ(c.request.at("target"), nlohmann::json(c.target));
    EXPECT_EQ(c.request.at("kernel").at("module"), c.row->ref.module);
    EXPECT_EQ(c.request.at("constants"), c.row->constants);
    EXPECT_GT(c.expected_s, 0);
    EXPECT_EQ(c.timeout_s, manifest.timeout_s);
    EXPECT_EQ(c.max_rss, manifest.max_rss_bytes);
  }
  // Before the probe, the warp size is the rule's: 64 on CDNA's gfx9, 32 elsewhere.
  EXPECT_EQ(cells[0].request["target"]["warp_size"], 32);
  EXPECT_EQ(cells[1].request["target"]["warp_size"], 64);
}

// The plan is everything execute() needs, decided before any process starts: the probe's question,
// the warm-up's targets (one per backend) and --reduce's representatives come with the cells.
TEST_F(CheckPipeline, ThePlanHoldsWhatExecutionNeeds) {
  const auto matrix = plan_matrix(manifest, {}, "text");
  auto plan = plan_environment(manifest, matrix, options, "current");
  EXPECT_EQ(plan.label, "current");
  ASSERT_EQ(plan.cells.size(), plan_cells(manifest, matrix, options, "current").size());
  EXPECT_EQ(plan.probe_request["tool_version"], PORTCHECK_VERSION);
  ASSERT_EQ(plan.probe_request["targets"].size(), matrix.columns.size());
  EXPECT_EQ(plan.probe_request["targets"][1]["warp_size"], 64);  // the rule's, before the probe
  ASSERT_EQ(plan.warm_targets.size(), 2u);  // cuda:90 and hip:gfx942: one of each backend
  for (std::size_t id = 0; id < plan.cells.size(); ++id) EXPECT_EQ(plan.representative[id], id);
  options.reduce = true;
  plan = plan_environment(manifest, matrix, options, "current");
  EXPECT_EQ(plan.representative, representatives(plan.cells));
}

TEST_F(CheckPipeline, PlanLimitsComeFromTheCommandLineThenTheRowThenTheManifest) {
  manifest.rows[1].timeout_s = 30;
  manifest.rows[2].max_rss_bytes = 1 << 30;
  auto cells = plan_cells(manifest, plan_matrix(manifest, {}, "text"), options, "current");
  EXPECT_EQ(cells[0].timeout_s, 300);
  EXPECT_EQ(cells[2].timeout_s, 30);
  EXPECT_EQ(cells[4].max_rss, 1u << 30);
  options.timeout_s = 5;
  options.max_rss_bytes = 1 << 20;
  cells = plan_cells(manifest, plan_matrix(manifest, {}, "text"), options, "current");
  for (const auto& c : cells) {
    EXPECT_EQ(c.timeout_s, 5);
    EXPECT_EQ(c.max_rss, 1u << 20);
  }
}

TEST_F(CheckPipeline, PlanRowTargetsNarrowTheRowAndTheCommandLineWins) {
  manifest.targets = {"cuda:90"};
  manifest.rows[1].targets = {"hip:gfx942"};  // mul: only AMD
  auto matrix = plan_matrix(manifest, {}, "text");
  EXPECT_EQ(matrix.columns, (std::vector<std::string>{"cuda:90", "hip:gfx942"}));
  EXPECT_EQ(matrix.row_targets.at("mul"), (std::vector<std::string>{"hip:gfx942"}));
  EXPECT_EQ(matrix.row_targets.at("add"), (std::vector<std::string>{"cuda:90"}));
  auto cells = plan_cells(manifest, matrix, options, "current");
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[1].row->display_name(), "mul");
  EXPECT_EQ(cells[1].target.name(), "hip:gfx942");

  matrix = plan_matrix(manifest, {"cuda:80", "cuda:120"}, "text");
  EXPECT_EQ(matrix.columns, (std::vector<std::string>{"cuda:80", "cuda:120"}));
  cells = plan_cells(manifest, matrix, options, "current");
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_EQ(cells[2].row->display_name(), "mul");
  EXPECT_EQ(cells[2].target.name(), "cuda:80");
}

TEST_F(CheckPipeline, PlanGivesEachVendorTheRowsItsOwnHostCodeLaunched) {
  // add: one row captured as an NVIDIA device, one as an AMD device (as `capture --as` writes a
  // kernel whose host code picks num_warps by vendor); scan: captured as NVIDIA only.
  manifest.rows[1] = manifest.rows[0];
  manifest.rows[0].variant = "nvidia";
  manifest.rows[0].captured_as = {"cuda:90"};
  manifest.rows[1].variant = "amd";
  manifest.rows[1].captured_as = {"hip:gfx942"};
  manifest.rows[2].captured_as = {"cuda:80"};
  const auto matrix = plan_matrix(manifest, {}, "text");
  EXPECT_EQ(matrix.row_targets.at("add[nvidia]"), (std::vector<std::string>{"cuda:90"}));
  EXPECT_EQ(matrix.row_targets.at("add[amd]"), (std::vector<std::string>{"hip:gfx942"}));
  EXPECT_EQ(matrix.row_targets.at("scan"), (std::vector<std::string>{"cuda:90", "hip:gfx942"}));
  const auto cells = plan_cells(manifest, matrix, options, "current");
  ASSERT_EQ(cells.size(), 4u);
  for (const auto& c : cells) {
    const bool foreign = c.row->kernel == "scan" && c.target.name() == "hip:gfx942";
    EXPECT_EQ(c.host_choices_of,
              foreign ? std::vector<std::string>{"cuda:80"} : std::vector<std::string>{})
        << c.row->display_name() << " on " << c.target.name();
  }
  // --targets does not bring back a row another vendor's host code never launches.
  EXPECT_EQ(plan_matrix(manifest, {"hip:gfx950"}, "text").row_targets.at("add[nvidia]"),
            std::vector<std::string>{});
}

TEST(CellResultNote, OnlyALaunchVerdictOnAnotherVendorsChoicesIsMarked) {
  CellResult cell;
  cell.target = "hip:gfx942";
  cell.status = Status::launch;
  EXPECT_EQ(bracketed_host_choices_note(cell), "");
  cell.host_choices_of = {"cuda:90"};
  EXPECT_TRUE(cell.foreign_launch_verdict());
  EXPECT_EQ(host_choices_note(cell),
            "not new: these options are what cuda:90's host code chose; `capture --as "
            "hip:gfx942` records what hip:gfx942 is launched with");
  cell.status = Status::failed;  // a compile failure is the target's own, whoever chose
  EXPECT_FALSE(cell.foreign_launch_verdict());
  EXPECT_EQ(host_choices_note(cell), "");
}

TEST_F(CheckPipeline, PlanShardsPartitionTheMatrixTheSameWayEveryTime) {
  manifest.rows[0].constants["BLOCK"] = 1024;  // uneven costs
  const auto matrix = plan_matrix(manifest, {}, "text");
  const auto all = plan_cells(manifest, matrix, options, "current");
  std::set<std::size_t> seen;
  for (int k = 1; k <= 3; ++k) {
    options.shard = ShardInfo{k, 3};
    const auto part = plan_cells(manifest, matrix, options, "current");
    EXPECT_FALSE(part.empty()) << k;
    for (const auto& c : part) {
      EXPECT_TRUE(seen.insert(c.index).second) << "cell " << c.index << " in two shards";
      // A sharded cell is the very cell of the whole plan at its index.
      EXPECT_EQ(c.request, all[c.index].request);
    }
    const auto again = plan_cells(manifest, matrix, options, "current");
    ASSERT_EQ(again.size(), part.size());
    for (std::size_t i = 0; i < part.size(); ++i) EXPECT_EQ(again[i].index, part[i].index);
  }
  EXPECT_EQ(seen.size(), all.size()) << "every cell in some shard";
}

TEST_F(CheckPipeline, PlanDigestIdentifiesTheManifestAndItsColumns) {
  const auto digest = plan_matrix(manifest, {}, "text").digest;
  EXPECT_EQ(digest.size(), 16u);
  EXPECT_EQ(plan_matrix(manifest, {}, "text").digest, digest);
  EXPECT_NE(plan_matrix(manifest, {}, "other text").digest, digest);
  EXPECT_NE(plan_matrix(manifest, {"cuda:90"}, "text").digest, digest);
}

TEST_F(CheckPipeline, PlanPutsSavedIrUnderLabelRowAndTarget) {
  options.save_ir_dir = tmp.path() / "ir";
  const auto cells = plan_cells(manifest, plan_matrix(manifest, {}, "text"), options, "3.8.0");
  EXPECT_EQ(cells[1].request.at("save_ir_dir"),
            (tmp.path() / "ir" / "3.8.0" / "add" / "hip_gfx942").string());
  EXPECT_FALSE(cells[1].request.contains("export_dir"));
}

// --- execute and interpret ------------------------------------------------------------------

TEST_F(CheckPipeline, EveryCellIsCompiledOnceAndJudged) {
  compiles["mul|cuda:90"] = frontend_error("NameError: name 'tl.foo' is not defined");
  const auto out = run();
  EXPECT_TRUE(out.completed);
  EXPECT_EQ(sessions_started, 1u);
  EXPECT_EQ(sessions_alive, 0u) << "no worker outlives the pass";
  ASSERT_EQ(compiled.size(), 6u);
  EXPECT_EQ(std::set<std::string>(compiled.begin(), compiled.end()).size(), 6u);
  ASSERT_EQ(out.cells.size(), 6u);
  EXPECT_EQ(out.cells[0].kernel, "add");  // plan order, whatever order they ended in
  EXPECT_EQ(out.cells[5].kernel, "scan");
  for (const auto& c : out.cells) {
    EXPECT_EQ(c.triton, "current");
    EXPECT_EQ(c.triton_version, "3.9.0");
    EXPECT_FALSE(c.cached);
    EXPECT_FALSE(c.expected_failure);
  }
  const auto& ok = cell(out, "add", "cuda:90");
  EXPECT_EQ(ok.status, Status::ok);
  EXPECT_EQ(ok.compile_s, 0.75);
  EXPECT_EQ(ok.metadata.num_warps, 4);
  EXPECT_FALSE(ok.is_new);
  const auto& bad = cell(out, "mul", "cuda:90");
  EXPECT_EQ(bad.status, Status::failed);
  EXPECT_EQ(bad.kind, FailureKind::frontend_error);
  EXPECT_EQ(bad.message, "NameError: name 'tl.foo' is not defined");
  EXPECT_TRUE(bad.is_new);
  EXPECT_NE(bad.log.find("Traceback"), std::string::npos);
  // One inspection per module, serving every cell of it.
  ASSERT_EQ(inspected.size(), 2u);
  EXPECT_EQ(inspected[0].at("cells").size() + inspected[1].at("cells").size(), 6u);
  ASSERT_TRUE(out.static_result);
  EXPECT_EQ(out.static_result->seconds, 0.25);
  EXPECT_EQ(out.from_cache, 0u);
}

TEST_F(CheckPipeline, CachedCellsAreNotStartedAndAreMarkedCached) {
  compiles["mul|cuda:90"] = frontend_error("NameError: name 'tl.foo' is not defined");
  const auto first = run();
  ASSERT_EQ(compiled.size(), 6u);
  const auto second = run();
  EXPECT_TRUE(compiled.empty()) << "every verdict was cached; got " << compiled.size();
  EXPECT_EQ(inspected.size(), 2u) << "the inspection still computes the keys";
  EXPECT_EQ(second.from_cache, 6u);
  ASSERT_EQ(second.cells.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    const auto& was = first.cells[i];
    const auto& now = second.cells[i];
    EXPECT_TRUE(now.cached);
    EXPECT_EQ(now.status, was.status);
    EXPECT_EQ(now.kind, was.kind);
    EXPECT_EQ(now.message, was.message);
    EXPECT_EQ(now.fingerprint, was.fingerprint);
    EXPECT_EQ(to_json(now.metadata), to_json(was.metadata));
  }
  EXPECT_EQ(cell(second, "mul", "cuda:90").kind, FailureKind::frontend_error);
}

// Issue 50: a module whose import asks Triton's driver is keyed by an inspection per target of
// its cells (its import under that target's driver, as those cells have it), so a warm rerun
// compiles none of its cells.
TEST_F(CheckPipeline, AModuleThatAsksTheDriverIsKeyedPerTargetAndServedFromTheCache) {
  options.use_cache = false;
  run();  // which modules there are; nothing cached
  const auto modules = inspected.size();
  for (const auto& request : inspected)
    driver_asking_modules.insert(
        request.at("kernels").at(0).at("kernel").at("module").get<std::string>());
  options.use_cache = true;
  const auto cold = run();
  EXPECT_EQ(compiled.size(), 6u);
  std::size_t per_target = 0;
  std::set<std::string> targets;
  for (const auto& request : inspected) {
    if (!request.contains("target")) continue;
    ++per_target;
    targets.insert(target_name(request.at("target")));
  }
  EXPECT_EQ(inspected.size(), modules + per_target);
  EXPECT_EQ(targets, (std::set<std::string>{"cuda:90", "hip:gfx942"}));
  const auto warm = run();
  EXPECT_TRUE(compiled.empty()) << compiled.size() << " compiled again";
  EXPECT_EQ(warm.from_cache, 6u);
  for (std::size_t i = 0; i < warm.cells.size(); ++i)
    EXPECT_EQ(warm.cells[i].status, cold.cells[i].status);
}

TEST_F(CheckPipeline, NoCacheCompilesEverythingAndAsksForNoKeys) {
  run();
  options.use_cache = false;
  const auto out = run();
  EXPECT_EQ(compiled.size(), 6u);
  for (const auto& r : inspected) EXPECT_FALSE(r.at("keys").get<bool>());
  for (const auto& c : out.cells) EXPECT_FALSE(c.cached);
}

TEST_F(CheckPipeline, CachedVerdictStandsOnlyUnderLimitsThatWouldHaveLetItFinish) {
  compiles["add|cuda:90"] = passes();
  compiles["add|cuda:90"].outcome.wall_seconds = 5.0;
  run();
  options.timeout_s = 2.0;  // the cached compile took 5 s: it would have timed out now
  auto out = run();
  EXPECT_EQ(compiled, (std::vector<std::string>{"add|cuda:90"}));
  EXPECT_FALSE(cell(out, "add", "cuda:90").cached);
  EXPECT_TRUE(cell(out, "add", "hip:gfx942").cached);
  options.timeout_s = 10.0;
  out = run();
  EXPECT_TRUE(compiled.empty());
  EXPECT_TRUE(cell(out, "add", "cuda:90").cached);
}

TEST_F(CheckPipeline, StaticSkipDoesNotCompilePredictedFailures) {
  const std::string reason = "fp8e4nv (the signature of x) is not supported on hip:gfx942";
  predictions["add|hip:gfx942"] = {
      {"reason", reason}, {"stage", "frontend"}, {"what", "fp8"}, {"name", "fp8e4nv"}};
  const auto fp = fingerprint(FailureKind::predicted, "static", "", reason);
  util::atomic_write_file(
      tmp.path() / "data" / "known-failures.toml",
      "[[failure]]\nfingerprint = \"" + fp +
          "\"\nwhy = \"no fp8e4nv on CDNA3\"\nlink = \"https://example.org/1\"\n");
  options.static_mode = StaticMode::skip;
  const auto out = run();
  EXPECT_FALSE(was_compiled("add", "hip:gfx942"));
  EXPECT_EQ(compiled.size(), 5u);
  const auto& c = cell(out, "add", "hip:gfx942");
  EXPECT_EQ(c.status, Status::failed);
  EXPECT_EQ(c.kind, FailureKind::predicted);
  EXPECT_EQ(c.stage, "static");
  EXPECT_EQ(c.message, reason);
  EXPECT_EQ(c.fingerprint, fp);
  EXPECT_EQ(c.predicted, predictions["add|hip:gfx942"]);
  EXPECT_TRUE(c.is_new);
  EXPECT_EQ(c.why, "no fp8e4nv on CDNA3");
  EXPECT_EQ(c.link, "https://example.org/1");

  // --static compile: predicted, compiled all the same; here it passes, and says what was said.
  options.static_mode = StaticMode::compile;
  const auto compiled_anyway = run();
  EXPECT_TRUE(was_compiled("add", "hip:gfx942"));
  const auto& d = cell(compiled_anyway, "add", "hip:gfx942");
  EXPECT_EQ(d.status, Status::ok);
  EXPECT_EQ(d.predicted, predictions["add|hip:gfx942"]);
}

TEST_F(CheckPipeline, StaticOnlyCompilesNothing) {
  predictions["scan|cuda:90"] = {{"reason", "libdevice.erfcx (scan at k.py:3) is not defined"},
                                 {"stage", "frontend"},
                                 {"what", "libdevice"},
                                 {"name", "erfcx"}};
  manifest.rows[0].xfail = {"cuda:90"};
  options.static_mode = StaticMode::only;
  const auto out = run();
  EXPECT_TRUE(compiled.empty());
  for (const auto& r : inspected) EXPECT_FALSE(r.at("keys").get<bool>());
  ASSERT_EQ(out.cells.size(), 6u);
  EXPECT_EQ(cell(out, "scan", "cuda:90").status, Status::failed);
  EXPECT_EQ(cell(out, "scan", "cuda:90").kind, FailureKind::predicted);
  for (const auto& c : out.cells) {
    if (c.kernel == "scan" && c.target == "cuda:90") continue;
    EXPECT_EQ(c.status, Status::unchecked) << c.kernel << " " << c.target;
    EXPECT_EQ(c.kind, FailureKind::none);
    EXPECT_FALSE(c.is_new);
  }
  EXPECT_TRUE(cell(out, "add", "cuda:90").expected_failure) << "unchecked, not an xpass";
}

TEST_F(CheckPipeline, CompiledCellOverALaunchLimitFailsAsLaunch) {
  compiles["add|cuda:90"] = passes(64);  // 64 warps of 32: 2048 threads, cuda:90 allows 1024
  const auto out = run();
  const auto& c = cell(out, "add", "cuda:90");
  EXPECT_EQ(c.status, Status::launch);
  EXPECT_EQ(c.kind, FailureKind::launch_limit);
  EXPECT_EQ(c.stage, "launch");
  EXPECT_TRUE(c.is_new);
  EXPECT_NE(c.message.find("needs 2048 threads per block"), std::string::npos) << c.message;
  EXPECT_EQ(c.fingerprint, fingerprint(FailureKind::launch_limit, "launch", "", c.message));
  EXPECT_EQ(c.launch.at("problems").size(), 1u);
  EXPECT_EQ(c.launch.at("needs").at("threads_per_block"), 2048);
  const auto& fits = cell(out, "mul", "cuda:90");
  EXPECT_EQ(fits.status, Status::ok);
  EXPECT_TRUE(fits.launch.at("problems").empty());
  EXPECT_TRUE(cell(out, "add", "hip:gfx942").launch.is_null()) << "no limits known for it";
}

TEST_F(CheckPipeline, LaunchLimitsWarnReportsButDoesNotFail) {
  compiles["add|cuda:90"] = passes(64);
  options.launch_limits_warn = true;
  const auto out = run();
  const auto& c = cell(out, "add", "cuda:90");
  EXPECT_EQ(c.status, Status::ok);
  EXPECT_EQ(c.kind, FailureKind::none);
  EXPECT_FALSE(c.is_new);
  EXPECT_EQ(c.launch.at("problems").size(), 1u);
}

TEST_F(CheckPipeline, ExpectedFailuresAreXfailAndUnexpectedPassesXpass) {
  manifest.rows[0].xfail = {"cuda:90", "hip:gfx942"};
  manifest.rows[1].xfail = {"cuda:90"};
  compiles["add|cuda:90"] = frontend_error("unsupported");
  compiles["mul|cuda:90"] = passes(64);  // fails at launch, as expected
  const auto out = run();
  const auto& xfail = cell(out, "add", "cuda:90");
  EXPECT_EQ(xfail.status, Status::xfail);
  EXPECT_TRUE(xfail.expected_failure);
  EXPECT_FALSE(xfail.is_new);
  const auto& xpass = cell(out, "add", "hip:gfx942");
  EXPECT_EQ(xpass.status, Status::xpass);
  EXPECT_FALSE(xpass.is_new);
  const auto& launch = cell(out, "mul", "cuda:90");
  EXPECT_EQ(launch.status, Status::xfail);
  EXPECT_EQ(launch.kind, FailureKind::launch_limit);
  EXPECT_FALSE(launch.is_new);
  EXPECT_EQ(cell(out, "mul", "hip:gfx942").status, Status::ok);
}

TEST_F(CheckPipeline, LostWorkersCrashesAndTimeoutsAreFailuresButNeverCached) {
  compiles["add|cuda:90"] = ended(Termination::worker_lost, "llir");
  compiles["add|hip:gfx942"] =
      ended(Termination::signaled, "llir", SIGSEGV, "LLVM ERROR: Cannot select: intrinsic\n");
  // The limit struck as the result was written: still a timeout, and not worth keeping.
  compiles["mul|cuda:90"] = ended(Termination::timed_out, "ttgir");
  compiles["mul|cuda:90"].result = ok_result();
  compiles["mul|hip:gfx942"] = frontend_error("a verdict of the compiler: cacheable");
  // A result that blames us (the stand-in driver), not the kernel: never kept either.
  compiles["scan|cuda:90"] = frontend_error("unused");
  (*compiles["scan|cuda:90"].result)["error"] = {{"type", "StandInDriverError"},
                                                 {"message", "the stand-in driver was asked"},
                                                 {"traceback", ""}};
  const auto out = run();
  const auto& lost = cell(out, "add", "cuda:90");
  EXPECT_EQ(lost.kind, FailureKind::internal_error);
  EXPECT_NE(lost.message.find("fork server died twice"), std::string::npos);
  const auto& crash = cell(out, "add", "hip:gfx942");
  EXPECT_EQ(crash.kind, FailureKind::crash);
  EXPECT_EQ(crash.stage, "llir");
  EXPECT_NE(crash.message.find("SIGSEGV"), std::string::npos);
  EXPECT_NE(crash.message.find("LLVM ERROR: Cannot select"), std::string::npos);
  const auto& timeout = cell(out, "mul", "cuda:90");
  EXPECT_EQ(timeout.kind, FailureKind::timeout);
  EXPECT_EQ(timeout.stage, "ttgir");
  const auto& ours = cell(out, "scan", "cuda:90");
  EXPECT_EQ(ours.kind, FailureKind::internal_error);
  EXPECT_EQ(ours.message, "the stand-in driver was asked");
  for (const auto* c : {&lost, &crash, &timeout, &ours}) {
    EXPECT_EQ(c->status, Status::failed);
    EXPECT_TRUE(c->is_new);
  }

  // The next run compiles those four again; the compiler's own verdicts come from the cache.
  compiles.clear();
  const auto again = run();
  std::sort(compiled.begin(), compiled.end());
  EXPECT_EQ(compiled, (std::vector<std::string>{"add|cuda:90", "add|hip:gfx942", "mul|cuda:90",
                                                "scan|cuda:90"}));
  EXPECT_TRUE(cell(again, "mul", "hip:gfx942").cached);
  EXPECT_EQ(cell(again, "mul", "hip:gfx942").kind, FailureKind::frontend_error);
  EXPECT_EQ(cell(again, "add", "cuda:90").status, Status::ok);
}

TEST_F(CheckPipeline, ModuleThatCrashesAtImportFailsOnlyItsOwnCells) {
  crashing_modules = {"other"};
  const auto out = run();
  EXPECT_FALSE(was_compiled("scan", "cuda:90"));
  EXPECT_FALSE(was_compiled("scan", "hip:gfx942"));
  EXPECT_EQ(compiled.size(), 4u);
  for (const auto& target : {"cuda:90", "hip:gfx942"}) {
    const auto& c = cell(out, "scan", target);
    EXPECT_EQ(c.kind, FailureKind::import_error);
    EXPECT_EQ(c.stage, "import");
    EXPECT_EQ(c.message, "importing the kernel's module killed its process with SIGSEGV");
    EXPECT_EQ(c.status, Status::failed);
    EXPECT_NE(c.log.find("Segmentation fault at import"), std::string::npos);
  }
  EXPECT_EQ(cell(out, "add", "cuda:90").status, Status::ok);
}

// The worker's result file shares a process with user code: one that breaks the protocol's
// schema (found by fuzz_classify: a null error_source line ended the run with exit 4) is that
// cell's internal error naming the member, never a verdict read from it nor the run's end. The
// kernel's metadata and resources are closed in the schema like the rest: a count that is not
// one is found there, not by each reader.
TEST_F(CheckPipeline, AResultThatBreaksTheSchemaIsTheCellsInternalErrorNamingTheMember) {
  auto damaged = frontend_error("NameError: name 'tl.foo' is not defined");
  (*damaged.result)["error_source"] = {{"file", "k.py"}, {"line", nullptr}};
  compiles["mul|cuda:90"] = damaged;
  auto misnamed = passes();
  (*misnamed.result)["compile_seconds"] = (*misnamed.result)["compile_s"];
  misnamed.result->erase("compile_s");
  compiles["mul|hip:gfx942"] = misnamed;
  auto huge = passes();
  (*huge.result)["metadata"]["num_warps"] = -1.5e300;
  (*huge.result)["resources"] = {{"registers", 1e300}};
  compiles["add|cuda:90"] = huge;
  const auto out = run();
  const auto& bad = cell(out, "mul", "cuda:90");
  EXPECT_EQ(bad.kind, FailureKind::internal_error);
  EXPECT_EQ(
      bad.message,
      fmt::format("the worker's result breaks protocol {}: compile_result.error_source.line: "
                  "expected integer, found null (a bug of triton-portcheck: please report it)",
                  worker_protocol_version()));
  EXPECT_NE(
      cell(out, "mul", "hip:gfx942").message.find("compile_result: missing member \"compile_s\""),
      std::string::npos)
      << cell(out, "mul", "hip:gfx942").message;
  EXPECT_EQ(cell(out, "add", "cuda:90").kind, FailureKind::internal_error);
  EXPECT_NE(cell(out, "add", "cuda:90")
                .message.find("compile_result.metadata.num_warps: -1.5e+300 is less than 0"),
            std::string::npos)
      << cell(out, "add", "cuda:90").message;
  EXPECT_EQ(cell(out, "add", "hip:gfx942").status, Status::ok);
}

TEST_F(CheckPipeline, InterruptedCellsAreNotResultsNorCached) {
  options.jobs = 1;
  on_compile = [this](FakeRunner& r, Id id) {
    r.ticks[id] = 2;  // each compile spans two waits, so one is still running when interrupted
    if (compiled.size() == 2) interrupted = true;
  };
  const auto out = run();
  EXPECT_FALSE(out.completed);
  ASSERT_EQ(compiled.size(), 2u) << "nothing starts after the interrupt";
  ASSERT_EQ(runner.cancelled.size(), 1u);
  ASSERT_EQ(out.cells.size(), 1u) << "only the cell that ended is a result";
  EXPECT_EQ(out.cells[0].kernel + "|" + out.cells[0].target, compiled[0]);
  EXPECT_EQ(out.cells[0].status, Status::ok);

  const auto first = compiled[0];
  const auto cancelled = compiled[1];
  interrupted = false;
  on_compile = nullptr;
  runner.cancel_calls = 0;
  const auto resumed = run();
  EXPECT_TRUE(resumed.completed);
  EXPECT_EQ(compiled.size(), 5u);
  EXPECT_EQ(std::count(compiled.begin(), compiled.end(), first), 0) << "served from the cache";
  EXPECT_EQ(std::count(compiled.begin(), compiled.end(), cancelled), 1) << "was never finished";
}

TEST_F(CheckPipeline, CacheKeysAndCompilesUseTheProbesWarpSize) {
  run();
  const auto guessed = compile_request.at("add|hip:gfx942");
  EXPECT_EQ(guessed.at("target").at("warp_size"), 64);
  // A backend that decides otherwise than our rule: what it says is what is compiled and keyed.
  probe_answer["targets"][1]["warp_size"] = 32;
  const auto out = run();
  // The probe is still asked with the rule's guess; everything after it uses its answer.
  EXPECT_EQ(probe_requests.back().at("targets").at(1).at("warp_size"), 64);
  for (const auto& r : inspected) {
    EXPECT_EQ(r.at("targets").at(1).at("warp_size"), 32);
    for (const auto& c : r.at("cells"))
      if (target_name(c.at("request").at("target")) == "hip:gfx942") {
        EXPECT_EQ(c.at("request").at("target").at("warp_size"), 32);
      }
  }
  std::sort(compiled.begin(), compiled.end());
  EXPECT_EQ(compiled,
            (std::vector<std::string>{"add|hip:gfx942", "mul|hip:gfx942", "scan|hip:gfx942"}))
      << "another warp size is another key: the AMD cells miss the cache, the others hit";
  EXPECT_EQ(compile_request.at("add|hip:gfx942").at("target").at("warp_size"), 32);
  EXPECT_TRUE(cell(out, "add", "cuda:90").cached);
}

TEST_F(CheckPipeline, UnknownOptionIsRefusedBeforeAnyCompile) {
  manifest.rows[1].options["num_warpz"] = 8;
  try {
    run();
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown compile option 'num_warpz'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean 'num_warps'?"), std::string::npos);
  }
  EXPECT_TRUE(compiled.empty());
  EXPECT_EQ(sessions_alive, 0u);
}

// Issue 43, item 3: a module's cells compile as soon as its own inspection has answered, while
// a slower module still imports (a library's modules import torch and more, seconds each).
TEST_F(CheckPipeline, AModulesCellsCompileWhileAnotherModuleStillImports) {
  import_ticks["other"] = 40;
  const auto out = run();
  ASSERT_EQ(out.cells.size(), 6u);
  for (const auto* row : {"add", "mul"})
    for (const auto* target : {"cuda:90", "hip:gfx942"}) {
      const auto name = std::string(row) + "|" + target;
      ASSERT_TRUE(was_compiled(row, target)) << name;
      EXPECT_LT(compile_started_at.at(name), 40u) << name << " waited for the other module";
    }
  EXPECT_GE(compile_started_at.at("scan|cuda:90"), 40u);
  for (const auto& c : out.cells) EXPECT_EQ(c.status, Status::ok) << c.kernel;
}

// What the inspection shows wrong (an argument the kernel lacks) in a module that answers late is
// the same error, naming the manifest's first wrong row, as when compiles waited for every
// inspection; no compile starts once it is known, and no worker outlives it.
TEST_F(CheckPipeline, AWrongRowFoundByALateInspectionIsTheManifestsFirstError) {
  import_ticks["kernels"] = 20;
  manifest.rows[0].signature = {{"x", "*fp32"}, {"m", "i32"}};  // add (kernels): no `m`
  manifest.rows[2].signature = {{"x", "*fp32"}, {"k", "i32"}};  // scan (other): no `k`
  try {
    run();
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'m'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(compiled.empty());
  EXPECT_EQ(sessions_alive, 0u);
}

// Issue 14, item 5: in a run of several releases, a target this one cannot compile for was a
// UsageError for the whole run; it is now its cells' verdict, and they are never compiled.
// A target the tool ships to (hip:gfx942 here) that this release refuses: its cells' verdict,
// whether one release is checked or several (cuda:100 on Triton 3.2).
TEST_F(CheckPipeline, TargetThisReleaseCannotCompileForIsItsCellsVerdict) {
  probe_answer["targets"][1].erase("warp_size");
  probe_answer["targets"][1]["unsupported"] = {
      {"reason", "unsupported"},
      {"message", "its AMD backend refuses it (unsupported target: 'gfx942')"},
      {"valid", {"gfx950"}}};
  options.use_cache = false;  // each pass compiles
  for (const bool several : {false, true}) {
    several_releases = several;
    const auto out = run();
    EXPECT_EQ(compiled.size(), 3u);
    ASSERT_EQ(out.cells.size(), 6u);
    for (const auto& row : {"add", "mul", "scan"}) {
      EXPECT_TRUE(was_compiled(row, "cuda:90"));
      EXPECT_EQ(cell(out, row, "cuda:90").status, Status::ok);
      const auto& refused = cell(out, row, "hip:gfx942");
      EXPECT_EQ(refused.status, Status::failed);
      EXPECT_EQ(refused.kind, FailureKind::unsupported_target);
      EXPECT_EQ(refused.stage, "target");
      EXPECT_TRUE(refused.is_new);
      EXPECT_EQ(refused.message,
                "'hip:gfx942' is an AMD architecture, but the installed Triton 3.9.0 cannot "
                "compile for it: its AMD backend refuses it (unsupported target: 'gfx942'); "
                "valid targets: hip:gfx950");
    }
    // The inspection is not asked about cells it cannot compile: no cache keys, no predictions.
    for (const auto& module : inspected)
      for (const auto& c : module.at("cells"))
        EXPECT_EQ(target_name(c.at("request").at("target")), "cuda:90");
    ASSERT_EQ(out.unsupported_targets.size(), 1u);
    EXPECT_TRUE(out.unsupported_targets.contains("hip:gfx942"));
  }
}

// A target the tool does not ship to (a typo, an architecture nobody asked it for) that the one
// release checked refuses: the run is refused, naming where the target was asked for.
TEST_F(CheckPipeline, TargetOutsideTheShippedOnesThatOneReleaseRefusesIsAUsageError) {
  manifest.targets = {"cuda:90", "hip:gfx90a"};
  probe_answer["targets"][1] = {{"name", "hip:gfx90a"}, {"backend", "hip"}, {"arch", "gfx90a"}};
  probe_answer["targets"][1]["unsupported"] = {
      {"reason", "unsupported"},
      {"message", "its AMD backend refuses it (unsupported target: 'gfx90a')"},
      {"valid", {"gfx942"}}};
  EXPECT_THROW(run(), UsageError);
  EXPECT_TRUE(compiled.empty());
}

// --- --reduce -------------------------------------------------------------------------------

TEST(Reduce, OnlyDivisibilityIsGroupedAway) {
  KernelRow a = make_row("add", "kernels", "/src");
  KernelRow b = a;
  a.signature["x"] = "*fp32:16";
  a.signature["n"] = "i32:16";
  b.variant = "plain";
  EXPECT_EQ(reduction_key(a), reduction_key(b));
  for (const auto& change : std::vector<std::function<void(KernelRow&)>>{
           [](KernelRow& r) { r.signature["x"] = "*fp16:16"; },
           [](KernelRow& r) { r.signature["n"] = "i64"; },
           [](KernelRow& r) { r.constants["BLOCK"] = 256; },
           [](KernelRow& r) { r.options["num_warps"] = 8; },
           [](KernelRow& r) { r.options["num_stages"] = 2; },
           [](KernelRow& r) { r.ref.function = "sub"; }}) {
    KernelRow c = b;
    change(c);
    EXPECT_NE(reduction_key(c), reduction_key(b));
  }
}

TEST_F(CheckPipeline, ReduceCompilesOneRowPerGroupAndJudgesEachRowAsItself) {
  KernelRow divisible = make_row("add", "kernels", tmp.path());
  divisible.variant = "x16";
  divisible.signature["x"] = "*fp32:16";
  KernelRow plain = make_row("add", "kernels", tmp.path());
  plain.variant = "x1";
  plain.xfail = {"hip:gfx942"};
  KernelRow wide = plain;
  wide.variant = "w8";
  wide.options["num_warps"] = 8;
  manifest.rows = {divisible, plain, wide};
  compiles["add[x16]|hip:gfx942"] = frontend_error("boom");
  compiles["add[w8]|hip:gfx942"] = frontend_error("boom");
  options.reduce = true;
  const auto out = run();
  EXPECT_TRUE(was_compiled("add[x16]", "cuda:90"));
  EXPECT_TRUE(was_compiled("add[x16]", "hip:gfx942"));
  EXPECT_TRUE(was_compiled("add[w8]", "hip:gfx942"));  // num_warps decides: its own group
  EXPECT_EQ(std::count_if(compiled.begin(), compiled.end(),
                          [](const auto& c) { return c.starts_with("add[x1]"); }),
            0);
  const auto& ok = cell(out, "add[x1]", "cuda:90");
  EXPECT_EQ(ok.status, Status::ok);
  EXPECT_EQ(ok.represented_by, "add[x16]");
  EXPECT_EQ(ok.compile_s, 0);
  const auto& expected = cell(out, "add[x1]", "hip:gfx942");
  EXPECT_EQ(expected.status, Status::xfail);  // its own xfail list, not its representative's
  EXPECT_EQ(expected.fingerprint, cell(out, "add[x16]", "hip:gfx942").fingerprint);
  EXPECT_EQ(cell(out, "add[x16]", "hip:gfx942").status, Status::failed);
  EXPECT_TRUE(cell(out, "add[x16]", "cuda:90").represented_by.empty());

  options.reduce = false;
  run();
  EXPECT_TRUE(was_compiled("add[x1]", "cuda:90"));
}

// --- option names ---------------------------------------------------------------------------

TEST(CheckOptionNames, EveryNameParsesBackToItsValue) {
  for (const auto mode : {StaticMode::compile, StaticMode::skip, StaticMode::only})
    EXPECT_EQ(parse_static_mode(to_string(mode)), mode);
  for (const auto isolation : {Isolation::fork, Isolation::process})
    EXPECT_EQ(parse_isolation(to_string(isolation)), isolation);
  EXPECT_EQ(to_string(StaticMode::skip), "skip");
  EXPECT_EQ(to_string(Isolation::process), "process");
  EXPECT_EQ(parse_static_mode("Skip"), std::nullopt);
  EXPECT_EQ(parse_isolation("thread"), std::nullopt);
}

}  // namespace
}  // namespace portcheck
