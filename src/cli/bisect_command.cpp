// `triton-portcheck bisect`: the first Triton release where a row's verdict on one target
// changed, found by compiling it under releases from the package index, each in its own version
// environment (made on demand, and removed again unless --keep-envs).
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "src/check/check.hpp"
#include "src/check/check_options.hpp"
#include "src/check/reproducer.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "src/core/tool_files.hpp"
#include "src/report/write_reports.hpp"
#include "src/run/python_worker.hpp"
#include "src/run/scratch_dir.hpp"
#include "src/versions/bisect.hpp"
#include "src/versions/bisect_report.hpp"
#include "src/versions/environments.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck::cli {
namespace {

// Older releases cannot be compiled with at all (kOldestRelease), so they are not bisected over.
constexpr const char* kOldestSupported = kOldestRelease;

struct BisectFlags {
  std::string row;
  std::string target;
  std::string from = kOldestSupported;
  std::string to = "current";
  bool all = false;
  bool pre = false;
  bool keep_envs = false;
  std::filesystem::path manifest = "portcheck.toml";
  bool demo = false;
  std::string python;
  std::string json;
  std::filesystem::path repro;  // --repro FILE: the verdicts are this reproducer's runs
};

// The environments this run installed, removed when it ends unless they are to be kept.
class InstalledEnvironments {
 public:
  explicit InstalledEnvironments(bool keep) : keep_(keep) {}
  InstalledEnvironments(const InstalledEnvironments&) = delete;
  InstalledEnvironments& operator=(const InstalledEnvironments&) = delete;
  ~InstalledEnvironments() {
    if (keep_ || installed_.empty()) return;
    std::uint64_t bytes = 0;
    std::vector<std::string> removed;
    for (const auto& [version, size] : installed_) {
      try {
        if (remove_environment(version)) {
          removed.push_back(version);
          bytes += size;
        }
      } catch (const std::exception&) {  // a destructor: what is left, `env list` shows
      }
    }
    std::fprintf(stderr, "bisect: removed the environments it installed: %s (%s)\n",
                 util::join(removed, ", ").c_str(), util::format_bytes(bytes).c_str());
  }

  // Makes the environment of `version` if there is none, saying what it installs.
  void ensure(const std::string& version, const std::string& python) {
    if (environment_python(version)) return;
    std::fprintf(stderr, "bisect: installing triton %s from the package index ...\n",
                 version.c_str());
    const auto added = add_environment(version, {}, python);
    installed_[version] = added.actual_bytes;
    std::fprintf(stderr, "bisect: installed triton %s: %s on disk (wheel %s)%s\n", version.c_str(),
                 util::format_bytes(added.actual_bytes).c_str(),
                 util::format_bytes(added.wheel_bytes).c_str(),
                 keep_ ? "" : "; removed when bisect ends (--keep-envs keeps it)");
  }

 private:
  bool keep_;
  std::map<std::string, std::uint64_t> installed_;
};

// Ctrl-C during one of the runs: what was found so far is not a result.
struct Interrupted {};

// Compiles rows under releases: one `check` run per release, from the result cache where it
// can; the two releases around each boundary once more with their IR kept (save_ir).
class ReleaseRunner {
 public:
  ReleaseRunner(const BisectFlags& f, const std::filesystem::path& ir_dir,
                InstalledEnvironments& environments)
      : ir_dir_(ir_dir), environments_(environments) {
    base_.manifest = f.manifest;
    base_.demo = f.demo;
    base_.targets = {f.target};
    base_.python = f.python;
    base_.unsupported_targets_are_cells = true;
  }

  // Compiles `rows` under `release` again, bypassing the cache, keeping every stage's IR.
  void save_ir(const std::string& release, const std::vector<std::string>& rows) {
    auto options = base_;
    options.save_ir_dir = ir_dir_;
    options.use_cache = false;
    run(label_of(release), rows, false, options);
  }

  // The current environment's Triton version, from a run of `rows` under it (kept).
  std::string current_version(const std::vector<std::string>& rows) {
    const auto verdicts = run("current", rows, true);
    current_ = verdicts.empty() ? std::string() : verdicts.begin()->second.cell.triton_version;
    if (current_.empty())
      throw EnvironmentError("bisect: the current environment compiled nothing");
    first_ = verdicts;
    return current_;
  }

  // The rows of the first run, in the manifest's order.
  [[nodiscard]] const std::vector<std::string>& row_names() const { return row_names_; }

  std::map<std::string, ReleaseVerdict> operator()(const std::string& release,
                                                   const std::vector<std::string>& rows) {
    auto out = label_of(release) == "current" && !first_.empty()
                   ? std::exchange(first_, {})
                   : run(label_of(release), rows, false);
    for (auto& [row, verdict] : out) verdict.release = release;
    return out;
  }

 private:
  // The environment a release compiles in: the current one for the current Triton's release.
  [[nodiscard]] std::string label_of(const std::string& release) const {
    return !current_.empty() && same_release(release, current_) ? "current" : release;
  }

  // A UsageError under a release other than the first run's is that release refusing the rows
  // (an option field it does not know): their verdict, not the command's failure.
  std::map<std::string, ReleaseVerdict> run(const std::string& label,
                                            const std::vector<std::string>& rows, bool first) {
    return run(label, rows, first, base_);
  }

  std::map<std::string, ReleaseVerdict> run(const std::string& label,
                                            const std::vector<std::string>& rows, bool first,
                                            CheckOptions options) {
    options.only_rows = rows;
    options.triton = {label};
    if (label != "current") environments_.ensure(label, base_.python);
    std::map<std::string, ReleaseVerdict> out;
    try {
      const auto report = run_check(options, interrupted());
      say_warnings(report, &said_);  // a release after another says what the first said
      if (report.interrupted) throw Interrupted();
      for (const auto& cell : report.cells) out[cell.kernel] = ReleaseVerdict{label, "", cell};
      if (first) row_names_ = report.rows;
    } catch (const UsageError& e) {
      if (first) throw;
      for (const auto& row : rows) out[row] = ReleaseVerdict{label, e.what(), {}};
    }
    return out;
  }

  CheckOptions base_;
  std::filesystem::path ir_dir_;
  InstalledEnvironments& environments_;
  std::string current_;
  std::map<std::string, ReleaseVerdict> first_;  // the first run's, handed out once
  std::vector<std::string> row_names_;
  std::set<std::string> said_;  // warnings
};

// --repro: each release runs the reproducer as its user would (check/reproducer.hpp), in that
// release's environment; its verdict is the run's, judged as a cell.
class ReproducerRunner {
 public:
  ReproducerRunner(const BisectFlags& f, ReproducerHeader header,
                   InstalledEnvironments& environments)
      : file_(f.repro),
        python_(f.python),
        header_(std::move(header)),
        environments_(environments) {}

  [[nodiscard]] std::string row() const { return file_.filename().string(); }

  std::string current_version() {
    const auto verdict = run("current");
    current_ = verdict.cell.triton_version;
    if (current_.empty())
      throw EnvironmentError(fmt::format("bisect: {} did not run in the current environment ({})",
                                         util::printable(file_.string()), verdict.summary()));
    return current_;
  }

  std::map<std::string, ReleaseVerdict> operator()(const std::string& release,
                                                   const std::vector<std::string>& /*rows*/) {
    auto verdict = run(same_release(release, current_) ? "current" : release);
    verdict.release = release;
    return {{row(), verdict}};
  }

 private:
  ReleaseVerdict run(const std::string& label) {
    std::string python = resolve_python(python_);
    if (label != "current") {
      environments_.ensure(label, python_);
      python = environment_python(label).value_or(std::filesystem::path(python)).string();
    }
    auto outcome = run_reproducer(file_, header_, python, label, ShareDirs::locate().data, 600,
                                  &interrupted());
    if (interrupted()) throw Interrupted();
    return ReleaseVerdict{label, "", std::move(outcome.cell)};
  }

  std::filesystem::path file_;
  std::string python_;
  ReproducerHeader header_;
  InstalledEnvironments& environments_;
  std::string current_;
};

void validate(const BisectFlags& f) {
  if (f.target.find(',') != std::string::npos)
    throw UsageError("--target: bisect follows one target; give one (cuda:90)");
  if (f.from == "current") throw UsageError("--from current: give the older release, e.g. 3.4.0");
  validate_compilable_release(f.from, "--from");
  if (f.to != "current") validate_compilable_release(f.to, "--to");
  if (!f.json.empty()) check_output_path(std::filesystem::path(f.json), "--json");
}

// The releases to search: the index's from --from to --to; the current environment's version
// is the last when --to is current, whether or not the index has it (a local build).
std::vector<std::string> releases_to_search(const BisectFlags& f, const std::string& current) {
  auto offered = index_releases(f.python);
  const std::string to = f.to == "current" ? current : f.to;
  const bool offered_to = std::any_of(offered.begin(), offered.end(),
                                      [&](const std::string& v) { return same_release(v, to); });
  if (f.to == "current" && !offered_to) {
    offered.push_back(current);
    std::sort(offered.begin(), offered.end(), release_less);
  }
  return releases_between(offered, f.from, to, f.pre);
}

// Prints the outcome (and writes --json); 0 when some row's verdict changed.
int finish_bisect(const BisectOutcome& outcome, const BisectFlags& f) {
  // Names and compiler messages shown as text, never acted on by a terminal or a CI log.
  std::fputs(
      util::no_workflow_commands(util::printable(render_bisect(outcome), util::Newlines::keep))
          .c_str(),
      stdout);
  if (!f.json.empty()) {
    make_folder_for(f.json);
    util::atomic_write_file(f.json, bisect_to_json(outcome).dump(2) + "\n");
  }
  const bool found = std::any_of(outcome.rows.begin(), outcome.rows.end(),
                                 [](const RowBisection& r) { return r.boundary.has_value(); });
  return found ? exit_code::ok : exit_code::new_failures;
}

// The search over `releases`: a binary search per row, or every release (--all).
BisectOutcome search(const BisectFlags& f, const std::vector<std::string>& releases,
                     const std::vector<std::string>& rows, const VerdictsOf& verdicts_of) {
  BisectOutcome outcome;
  outcome.target = f.target;
  outcome.releases = releases;
  outcome.all = f.all;
  outcome.rows =
      f.all ? walk_all(releases, rows, verdicts_of) : bisect_rows(releases, rows, verdicts_of);
  return outcome;
}

int run_bisect_repro(BisectFlags f) {
  if (!f.row.empty()) throw UsageError("--repro FILE is the test: give no row");
  auto header = read_reproducer(f.repro);
  if (!f.target.empty() && f.target != header.target.name())
    throw UsageError(fmt::format("--target {}: {} reproduces a cell of {}", f.target,
                                 util::printable(f.repro.string()), header.target.name()));
  f.target = header.target.name();
  validate(f);
  InstalledEnvironments environments(f.keep_envs);
  ReproducerRunner runner(f, std::move(header), environments);
  const VerdictsOf verdicts_of = [&](const std::string& release,
                                     const std::vector<std::string>& asked) {
    return runner(release, asked);
  };
  try {
    const auto releases = releases_to_search(f, runner.current_version());
    return finish_bisect(search(f, releases, {runner.row()}, verdicts_of), f);
  } catch (const Interrupted&) {
    return exit_code::interrupted;
  }
}

int run_bisect(const BisectFlags& f) {
  if (!f.repro.empty()) return run_bisect_repro(f);
  if (f.target.empty()) throw UsageError("--target: give the one target to follow (cuda:90)");
  validate(f);
  const ScratchDir scratch("triton-portcheck-bisect");
  InstalledEnvironments environments(f.keep_envs);
  ReleaseRunner runner(f, scratch.path() / "ir", environments);
  // Every row of the manifest, unless one is named; the first run (the current environment)
  // says which rows there are and whether the manifest, row and target are valid.
  std::vector<std::string> rows;
  if (!f.row.empty()) rows.push_back(f.row);
  std::string current;
  try {
    current = runner.current_version(rows);
  } catch (const Interrupted&) {
    return exit_code::interrupted;
  }
  if (rows.empty()) rows = runner.row_names();
  const auto releases = releases_to_search(f, current);
  const VerdictsOf verdicts_of = [&](const std::string& release,
                                     const std::vector<std::string>& asked) {
    return runner(release, asked);
  };
  BisectOutcome outcome;
  try {
    outcome = search(f, releases, rows, verdicts_of);
    outcome.ir_dir = scratch.path() / "ir";
    // The IR of the two releases around each boundary, for the first stage that differs.
    std::map<std::string, std::vector<std::string>> boundary_rows;  // release -> rows
    for (const auto& row : outcome.rows)
      if (row.boundary) {
        boundary_rows[row.boundary->first].push_back(row.row);
        boundary_rows[row.boundary->second].push_back(row.row);
      }
    for (const auto& [release, asked] : boundary_rows) runner.save_ir(release, asked);
  } catch (const Interrupted&) {
    return exit_code::interrupted;
  }
  return finish_bisect(outcome, f);
}

void add_bisect_options(CLI::App* command, BisectFlags& f) {
  command->add_option("row", f.row,
                      "The manifest row, as check names it (kernel or kernel[variant]); "
                      "none: every row whose verdict differs between the ends");
  command->add_option("-t,--target", f.target,
                      "The one target to follow (cuda:90; with --repro, the file's)");
  command->add_option("--from", f.from,
                      fmt::format("The older end (default {}, the oldest release it compiles "
                                  "with)",
                                  kOldestSupported));
  command->add_option("--to", f.to, "The newer end (default current: the Triton of --python)");
  command->add_flag("--all", f.all, "Compile every release in the range and print the history");
  command->add_flag("--pre", f.pre, "Include pre-releases (rc, beta) between the ends");
  command->add_flag("--keep-envs", f.keep_envs,
                    "Keep the environments it installs (default: removed at the end)");
  command->add_option("-m,--manifest", f.manifest, "Manifest file (default: portcheck.toml)");
  command->add_flag("--demo", f.demo, "Bisect a row of the bundled demo");
  command->add_option("--python", f.python, "Python interpreter holding the current Triton");
  command->add_option("--json", f.json, "Also write the whole result as JSON to this file");
  command->add_option("--repro", f.repro,
                      "A reproducer written by `repro`: run it under each release instead of "
                      "compiling a row (it reproduces where its fingerprint is the cell's)");
}

}  // namespace

Command add_bisect_command(CLI::App& app) {
  auto flags = std::make_shared<BisectFlags>();
  auto* command = app.add_subcommand(
      "bisect", "Find the first Triton release where a row's verdict on a target changed");
  add_bisect_options(command, *flags);
  command->footer(
      "Exit status: 0 a release where the verdict changed was found; 1 the verdict did not "
      "change between the ends; 2 bad arguments; 3 environment problem (package index, pip).");
  return {command, [flags] { return run_bisect(*flags); }};
}

}  // namespace portcheck::cli
