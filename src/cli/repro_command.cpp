// `triton-portcheck repro`: one failing cell as a Python file that reproduces it with nothing but
// Triton installed, for an upstream bug report or a colleague's machine; `repro --verify FILE`
// runs such a file and says whether it still reproduces its fingerprint.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/check/check.hpp"
#include "src/check/reproducer.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/core/tool_files.hpp"
#include "src/report/repro.hpp"
#include "src/report/write_reports.hpp"
#include "src/run/python_worker.hpp"
#include "src/versions/environments.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace portcheck::cli {
namespace {

struct ReproFlags {
  CheckOptions options;
  std::vector<std::string> rows;
  std::string target, triton, verify;
  bool failing = false;  // --failing: every failing cell of the selection
  std::string timeout_text, max_rss_text;
  std::filesystem::path output;
  bool shrink = false;
  double shrink_s = 60;
};

void refuse_without_compile(const CellResult& cell) {
  const auto what = fmt::format("{} on {} (Triton {})", util::printable(cell.kernel), cell.target,
                                cell.triton_version);
  if (cell.kind == FailureKind::none)
    throw UsageError(what + " compiles: there is no failure to reproduce");
  if (cell.kind == FailureKind::import_error)
    throw UsageError(what + ": its module does not import, so there is nothing to compile (" +
                     util::printable(cell.message) + ")");
  if (!failed_in_compile(cell.kind))
    throw UsageError(fmt::format("{}: its verdict, {}, had no compile to reproduce ({})", what,
                                 to_string(cell.kind), util::printable(cell.message)));
}

// The cell of `row` on `target` (on the one target checked, where that is empty).
const CellResult& the_cell(const Report& report, const std::string& row,
                           const std::string& target) {
  const auto it = std::find_if(report.cells.begin(), report.cells.end(), [&](const CellResult& c) {
    return c.kernel == row && (target.empty() || c.target == target);
  });
  if (it == report.cells.end())
    throw UsageError(fmt::format("row '{}': no cell of it was checked", util::printable(row)));
  return *it;
}

// The limits the cell had, as check planned them (plan_cells): --timeout and --max-rss, else the
// row's, else the manifest's.
struct CellLimits {
  double time_limit_s = 0;
  std::uint64_t max_rss_bytes = 0;
};

CellLimits limits_of(const ReproFlags& f, const std::string& row_name) {
  const auto manifest = load_manifest(f.options.demo ? ShareDirs::locate().demo / "portcheck.toml"
                                                     : f.options.manifest);
  CellLimits limits{manifest.timeout_s, manifest.max_rss_bytes};
  for (const auto& row : manifest.rows) {
    if (row.display_name() != row_name) continue;
    limits.time_limit_s = row.timeout_s.value_or(limits.time_limit_s);
    limits.max_rss_bytes = row.max_rss_bytes.value_or(limits.max_rss_bytes);
  }
  limits.time_limit_s = f.options.timeout_s.value_or(limits.time_limit_s);
  limits.max_rss_bytes = f.options.max_rss_bytes.value_or(limits.max_rss_bytes);
  return limits;
}

// A flag's value as one shell word: bare when it is plainly one (2.5, 8GiB).
std::string shell_word(const std::string& text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-';
  });
  return plain ? text : util::shell_quoted(text);
}

// The command that writes the file again: the limits given on the command line included.
std::string command_of(const CellResult& cell, const Report& report, const ReproFlags& f) {
  auto command = repro_command(cell, report.manifest);
  if (!f.timeout_text.empty()) command += " --timeout " + shell_word(f.timeout_text);
  if (!f.max_rss_text.empty()) command += " --max-rss " + shell_word(f.max_rss_text);
  return command + (f.shrink ? " --shrink" : "");
}

nlohmann::json facts_of(const CellResult& cell, const Report& report, const ReproFlags& f) {
  nlohmann::json facts = {{"kernel", cell.kernel},
                          {"target", cell.target},
                          {"kind", to_string(cell.kind)},
                          {"stage", cell.stage},
                          {"pass", cell.pass},
                          {"fingerprint", cell.fingerprint},
                          {"message", cell.message},
                          {"tool", std::string("triton-portcheck ") + PORTCHECK_VERSION},
                          {"command", command_of(cell, report, f)},
                          {"launch", cell.launch},
                          {"shrink_s", f.shrink ? f.shrink_s : 0.0}};
  // The limit the cell ran into goes into the file, which stops its compile there too.
  if (cell.kind == FailureKind::timeout)
    facts["time_limit_s"] = limits_of(f, cell.kernel).time_limit_s;
  if (cell.kind == FailureKind::oom)
    facts["max_rss_bytes"] = limits_of(f, cell.kernel).max_rss_bytes;
  return facts;
}

std::string python_for(const ReproFlags& f) {
  if (f.triton.empty() || f.triton == "current") return resolve_python(f.options.python);
  if (auto python = environment_python(f.triton)) return python->string();
  throw UsageError(fmt::format("--triton {}: no such environment (`env list`)", f.triton));
}

std::filesystem::path default_output(const CellResult& cell) {
  auto name = "repro_" + cell.kernel + "_" + cell.target;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
      '_');
  return name + ".py";
}

// Ctrl-C while the reproducer is written or checked: nothing more is said.
struct Interrupted {};

// The check's second pass, which writes the cells' reproducers instead of compiling: one run for
// them all, each cell with its facts.
Report reproducers_run(CheckOptions options, ReproducerFacts facts) {
  options.only_rows.clear();
  options.targets.clear();
  for (const auto& [cell, _] : facts) {
    const auto& [row, target] = cell;
    if (std::find(options.only_rows.begin(), options.only_rows.end(), row) ==
        options.only_rows.end())
      options.only_rows.push_back(row);
    if (std::find(options.targets.begin(), options.targets.end(), target) == options.targets.end())
      options.targets.push_back(target);
  }
  options.repro = std::move(facts);
  options.use_cache = false;
  auto report = run_check(options, interrupted());
  if (report.interrupted) throw Interrupted();
  return report;
}

// The cell's reproducer in the second pass's report; nullopt, said on stderr, where none came.
std::optional<ReproducerText> reproducer_in(const Report& written, const CellResult& failed) {
  const auto& cell = the_cell(written, failed.kernel, failed.target);
  if (!cell.repro || !cell.repro->text) {
    // The module imported for the check and not now (or ran out of time): the user's code, not
    // the environment; said in one line, exit 1.
    const auto why =
        cell.repro ? cell.repro->error.value_or("") : to_string(cell.kind) + ": " + cell.message;
    std::fprintf(stderr, "triton-portcheck: could not write the reproducer of %s on %s: %s\n",
                 util::printable(cell.kernel).c_str(), cell.target.c_str(),
                 util::printable(why).c_str());
    return std::nullopt;
  }
  return cell.repro;
}

// What the user reads while the file is written: on stdout, unless the file itself goes there.
std::FILE* speaking_stream(const std::filesystem::path& destination) {
  return util::is_standard_output(destination) ? stderr : stdout;
}

// The file as it is checked, in a private folder: a FIFO or standard output cannot be run
// afterwards, and the destination gets only the text that was checked, once. Its name is the
// destination's where that is a file's name, so that "checked: python NAME" names it.
std::filesystem::path draft_path(const util::TempDir& scratch, const std::filesystem::path& dest,
                                 const CellResult& cell) {
  const bool named = !util::is_standard_output(dest) && !util::is_special_file(dest) &&
                     !dest.filename().empty() && dest.filename() != "." && dest.filename() != "..";
  return scratch.path() / (named ? dest.filename() : default_output(cell));
}

void write_draft(const std::filesystem::path& draft, const ReproducerText& repro) {
  try {
    util::atomic_write_file(draft, repro.text.value_or(""));
  } catch (const util::WriteError& e) {
    const auto fix = e.disk_fix();
    throw EnvironmentError(util::printable(e.what()) + (fix.empty() ? "" : ": " + fix));
  }
}

// The checked text where -o points, as reports are written (util::write_output_file): "-" and
// our own standard output through fd 1, a FIFO or a device written into as it is, a regular file
// replaced whole through any symbolic link, which stays a link. A new regular file is made
// executable (it starts with #!/usr/bin/env python3); one that was there keeps its mode bits.
void deliver(const std::filesystem::path& path, const ReproducerText& repro, std::FILE* say) {
  const bool to_stdout = util::is_standard_output(path);
  const bool regular = !to_stdout && !util::is_special_file(path);
  try {
    make_folder_for(path);
    const auto file = regular ? util::resolve_links(path) : path;
    struct stat before {};
    const bool existed = regular && ::stat(file.c_str(), &before) == 0;
    util::write_output_file(path, repro.text.value_or(""));
    if (regular) ::chmod(file.c_str(), existed ? (before.st_mode & 07777) : 0755);
  } catch (const std::runtime_error& e) {  // util's file errors; nothing is left half-written
    throw EnvironmentError(util::printable(e.what()) +
                           ": free space there or choose a folder you can write to (-o)");
  }
  const auto where =
      to_stdout ? std::string("the reproducer to standard output") : util::printable(path.string());
  std::fprintf(say, "wrote %s (%lld lines", where.c_str(),
               static_cast<long long>(repro.lines.value_or(0)));
  if (repro.imports_module.value_or(false))
    std::fprintf(
        say, "; it imports the kernel's module: %s",
        util::printable(nlohmann::json(repro.blockers.value_or(std::vector<std::string>{})).dump())
            .c_str());
  std::fprintf(say, ")\n");
  std::fflush(say);
}

void say_shrunk(const ReproducerText& repro, std::FILE* say) {
  if (const auto& s = repro.shrink)
    std::fprintf(
        say,
        "shrink: the kernel's code from %lld to %lld lines in %.1f s, %lld candidates tried (%s)\n",
        static_cast<long long>(s->before_lines), static_cast<long long>(s->after_lines), s->seconds,
        static_cast<long long>(s->candidates), util::printable(s->note).c_str());
}

ReproducerRun check_written(const std::filesystem::path& path, const ReproFlags& f,
                            std::FILE* say) {
  const auto header = read_reproducer(path);
  auto run = run_reproducer(path, header, python_for(f), f.triton.empty() ? "current" : f.triton,
                            ShareDirs::locate().data, 600, &interrupted());
  if (interrupted()) throw Interrupted();
  std::fprintf(say, "checked: python %s %s\n", util::printable(path.filename().string()).c_str(),
               util::printable(describe(run, header)).c_str());
  std::fflush(say);
  return run;
}

std::optional<ReproducerText> written_reproducer(const CheckOptions& options,
                                                 const CellResult& cell,
                                                 const nlohmann::json& facts) {
  return reproducer_in(reproducers_run(options, {{{cell.kernel, cell.target}, facts}}), cell);
}

int write_repro(const ReproFlags& f) {
  CheckOptions options = f.options;
  options.targets = {f.target};
  options.only_rows = f.rows;
  if (!f.triton.empty()) options.triton = {f.triton};
  if (!f.output.empty()) check_output_path(f.output, "-o");
  const auto report = run_check(options, interrupted());
  say_warnings(report);  // the second pass (reproducers_run) has the same: said once, here
  if (report.interrupted) return exit_code::interrupted;
  const auto& cell = the_cell(report, f.rows.front(), "");
  refuse_without_compile(cell);
  auto facts = facts_of(cell, report, f);
  const auto path = f.output.empty() ? default_output(cell) : f.output;
  auto* say = speaking_stream(path);
  auto repro = written_reproducer(options, cell, facts);
  if (!repro) return exit_code::new_failures;
  say_shrunk(*repro, say);
  if (cell.kind == FailureKind::timeout) {
    deliver(path, *repro, say);
    std::fprintf(say, "not run here: the cell ran out of time (%g s); the file says so when run\n",
                 facts.value("time_limit_s", 0.0));
    return exit_code::ok;
  }
  const util::TempDir scratch("triton-portcheck-repro-file");
  const auto draft = draft_path(scratch, path, cell);
  write_draft(draft, *repro);
  auto run = check_written(draft, f, say);
  if (run.reproduction != Reproduction::same && repro->shrink) {
    std::fprintf(say, "the shrunk kernel fails differently: writing the whole kernel instead\n");
    facts["shrink_s"] = 0.0;
    repro = written_reproducer(options, cell, facts);
    if (!repro) return exit_code::new_failures;
    write_draft(draft, *repro);
    run = check_written(draft, f, say);
  }
  deliver(path, *repro, say);
  return run.reproduction == Reproduction::same ? exit_code::ok : exit_code::new_failures;
}

// --failing: each cell's file is named as `repro` names one cell's, in the folder -o names; a
// second cell whose name comes out the same (rows "a.b" and "a_b") gets "_2".
std::filesystem::path output_in(const std::filesystem::path& folder, const CellResult& cell,
                                std::set<std::string>& taken) {
  const auto stem = default_output(cell).stem().string();
  auto name = stem;
  for (int n = 2; !taken.insert(name).second; ++n) name = fmt::format("{}_{}", stem, n);
  return folder / (name + ".py");
}

// One failing cell's file, checked as a single cell's is; true when it reproduces the cell (a
// cell that ran out of time is written, not run, as with one cell).
bool deliver_checked(const CellResult& cell, const ReproducerText& repro,
                     const std::filesystem::path& path, const ReproFlags& f) {
  if (cell.kind == FailureKind::timeout) {
    deliver(path, repro, stdout);
    std::printf("not run here: the cell ran out of time; the file says so when run\n");
    return true;
  }
  const util::TempDir scratch("triton-portcheck-repro-file");
  const auto draft = scratch.path() / path.filename();
  write_draft(draft, repro);
  const auto run = check_written(draft, f, stdout);
  deliver(path, repro, stdout);
  return run.reproduction == Reproduction::same;
}

// The failing cells of the check that reproducers can replay, each with its facts; the others
// are named, with why they have none.
std::vector<const CellResult*> reproducible_cells(const Report& report, const ReproFlags& f,
                                                  ReproducerFacts& facts) {
  std::vector<const CellResult*> cells;
  for (const auto& cell : report.cells) {
    if (cell.kind == FailureKind::none) continue;
    if (!failed_in_compile(cell.kind)) {
      std::printf("skipped %s on %s: its verdict, %s, had no compile to reproduce\n",
                  util::printable(cell.kernel).c_str(), cell.target.c_str(),
                  std::string(to_string(cell.kind)).c_str());
      continue;
    }
    cells.push_back(&cell);
    facts[{cell.kernel, cell.target}] = facts_of(cell, report, f);
  }
  return cells;
}

// `repro --failing`: a reproducer of every failing cell of the check (its rows and targets as
// given), written by one second pass and each checked as `repro` checks one.
int write_failing_repros(const ReproFlags& f) {
  CheckOptions options = f.options;
  options.targets = f.target.empty() ? std::vector<std::string>{} : util::split(f.target, ',');
  options.only_rows = f.rows;
  options.triton = {f.triton.empty() ? "current" : f.triton};
  const auto folder = f.output.empty() ? std::filesystem::path(".") : f.output;
  if (util::is_standard_output(folder))
    throw UsageError("-o: --failing writes a file per cell: name a folder");
  prepare_output_folder(folder, "-o");
  const auto report = run_check(options, interrupted());
  say_warnings(report);
  if (report.interrupted) return exit_code::interrupted;
  ReproducerFacts facts;
  const auto cells = reproducible_cells(report, f, facts);
  if (cells.empty()) {
    std::printf("no cell failed in a compile: there is nothing to reproduce\n");
    return exit_code::ok;
  }
  const auto written = reproducers_run(options, std::move(facts));
  std::set<std::string> taken;
  std::size_t reproduced = 0;
  for (const auto* cell : cells) {
    const auto repro = reproducer_in(written, *cell);
    if (repro && deliver_checked(*cell, *repro, output_in(folder, *cell, taken), f)) ++reproduced;
  }
  std::printf("%zu of %zu failing cells reproduce their fingerprint\n", reproduced, cells.size());
  return reproduced == cells.size() ? exit_code::ok : exit_code::new_failures;
}

int verify_repro(const ReproFlags& f) {
  const auto header = read_reproducer(f.verify);
  const auto run =
      run_reproducer(f.verify, header, python_for(f), f.triton.empty() ? "current" : f.triton,
                     ShareDirs::locate().data, 600, &interrupted());
  if (interrupted()) return exit_code::interrupted;
  const auto triton = run.cell.triton_version.empty()
                          ? "the Triton of " + python_for(f)  // no result: it ran out of time
                          : "Triton " + run.cell.triton_version;
  std::printf("%s with %s on %s: %s\n", util::printable(f.verify).c_str(),
              util::printable(triton).c_str(), header.target.name().c_str(),
              util::printable(describe(run, header)).c_str());
  return run.reproduction == Reproduction::same ? exit_code::ok : exit_code::new_failures;
}

int run_repro_command(ReproFlags f) {
  // As check takes them: a limit the supervisor cannot enforce is refused, not lifted.
  if (!f.timeout_text.empty()) f.options.timeout_s = parse_timeout(f.timeout_text);
  if (!f.max_rss_text.empty())
    f.options.max_rss_bytes = positive_size(f.max_rss_text, "--max-rss", "8GiB");
  if (!f.verify.empty()) {
    if (!f.rows.empty() || f.failing)
      throw UsageError("--verify FILE runs a written file: give no row and no --failing");
    return verify_repro(f);
  }
  if (f.triton.find(',') != std::string::npos)
    throw UsageError("repro writes with one environment: give at most one --triton");
  if (f.failing && f.shrink)
    throw UsageError("--shrink makes one cell's kernel smaller: give one row and one --target");
  if (!f.failing) {
    if (f.rows.empty())
      throw UsageError(
          "repro: give the row (kernel or kernel[variant]), or --failing for every "
          "failing cell");
    if (f.rows.size() > 1)
      throw UsageError(
          "repro writes one cell: give one row, or --failing for the failing cells "
          "of several");
    if (f.target.empty()) throw UsageError("--target: give the one target of the cell (cuda:90)");
    if (f.target.find(',') != std::string::npos)
      throw UsageError("repro writes one cell: give one --target, or --failing for several");
  }
  if (f.shrink && !(f.shrink_s > 0))
    throw UsageError("--shrink-time: give a positive number of seconds");
  try {
    return f.failing ? write_failing_repros(f) : write_repro(f);
  } catch (const Interrupted&) {
    return exit_code::interrupted;
  }
}

void add_repro_options(CLI::App* command, ReproFlags& f) {
  command->add_option("rows", f.rows,
                      "The manifest row, as check names it (kernel[variant]); with --failing, "
                      "the rows whose failing cells to write (default: every row)");
  command->add_option("-t,--target", f.target,
                      "The cell's target (cuda:90, hip:gfx942); with --failing, the targets to "
                      "check, comma-separated (default: the manifest's)");
  command->add_flag("--failing", f.failing,
                    "Write a reproducer of every cell that fails in a compile, each checked, "
                    "into the folder -o names");
  command->add_option("--triton", f.triton,
                      "The Triton environment of the cell: current (default) or a version");
  command->add_option("-o,--output", f.output,
                      "The file to write (default: repro_<row>_<target>.py here); with --failing, "
                      "the folder (default: here)");
  command->add_option("-m,--manifest", f.options.manifest,
                      "Manifest file (default: portcheck.toml)");
  command->add_flag("--demo", f.options.demo, "A row of the bundled demo");
  command->add_option("--python", f.options.python, "Python interpreter holding Triton");
  command->add_option("--timeout", f.timeout_text,
                      "The cell's time limit in seconds, as check's --timeout (default: the "
                      "row's)");
  command->add_option("--max-rss", f.max_rss_text,
                      "The cell's memory limit, as check's --max-rss, e.g. 8GiB (default: the "
                      "row's)");
  command->add_flag("--shrink", f.shrink,
                    "Make the kernel smaller while it fails the same way (drop statements and "
                    "keyword arguments, keep one operand, halve block sizes)");
  command->add_option("--shrink-time", f.shrink_s, "The time --shrink may take (default 60 s)");
  command->add_option("--verify", f.verify,
                      "Run a reproducer written before and say whether it still reproduces its "
                      "fingerprint (with --python or --triton)");
}

}  // namespace

Command add_repro_command(CLI::App& app) {
  auto flags = std::make_shared<ReproFlags>();
  auto* command = app.add_subcommand(
      "repro", "Write a failing cell as a Python file that reproduces it with only Triton");
  add_repro_options(command, *flags);
  command->footer(
      "Exit status: 0 the file was written and reproduces the cell's fingerprint (--verify: it "
      "still does; --failing: every file does, or no cell failed); 1 it does not (it compiles, or "
      "fails differently); 2 bad arguments, or a cell with nothing to reproduce; 3 environment "
      "problem.");
  return {command, [flags] { return run_repro_command(*flags); }};
}

}  // namespace portcheck::cli
