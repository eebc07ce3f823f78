// `triton-portcheck export`: each row's binary, assembly, launch descriptor and C++ launcher.
#include <cstdio>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/check/check.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/cli/output_flags.hpp"
#include "src/core/errors.hpp"
#include "src/export/export.hpp"
#include "src/report/terminal.hpp"
#include "src/run/scratch_dir.hpp"
#include "util/fs.hpp"
#include "util/term.hpp"
#include "util/text_escape.hpp"

namespace portcheck::cli {
namespace {

struct ExportFlags {
  CheckOptions options;
  bool quiet = false;
  std::vector<std::string> rows, targets;
  std::filesystem::path dir;
  std::string kernel, signature, constants, compile_options;
};

// --kernel instead of a manifest: a one-row manifest written to `folder`, read by the same parser
// as any other, so the same checks and messages apply.
std::filesystem::path write_adhoc_manifest(const ExportFlags& f,
                                           const std::filesystem::path& folder) {
  const auto& kernel = f.kernel;
  const auto colon = kernel.rfind(':');
  const auto file_part = kernel.substr(0, colon);
  const auto target = file_part.ends_with(".py")
                          ? std::filesystem::absolute(file_part).string() + kernel.substr(colon)
                          : kernel;
  std::string text =
      fmt::format("[[kernel]]\nname = {}\ntarget = {}\n",
                  nlohmann::json(kernel.substr(colon + 1)).dump(), nlohmann::json(target).dump());
  if (!f.signature.empty()) text += "signature = " + f.signature + "\n";
  if (!f.constants.empty()) text += "constants = " + f.constants + "\n";
  if (!f.compile_options.empty()) text += "options = " + f.compile_options + "\n";
  auto manifest = folder / "export.toml";
  util::atomic_write_file(manifest, text);
  return manifest;
}

// Writes the files of every cell that compiled; names each one that did not (exit 1).
int write_exports(const Report& report) {
  if (print_output_errors(report)) return exit_code::environment;
  int code = exit_code_for(report);
  for (const auto& cell : report.cells) {
    if (cell.status != Status::ok && cell.status != Status::xpass) {
      // The compiler's message on one line, its control characters shown escaped.
      std::fprintf(stderr, "triton-portcheck: not exported: %s on %s failed (%s in %s: %s)\n",
                   util::printable(cell.kernel).c_str(), util::printable(cell.target).c_str(),
                   to_string(cell.kind).c_str(), util::printable(cell.stage).c_str(),
                   util::printable(cell.message).c_str());
      code = exit_code::new_failures;
      continue;
    }
    try {
      for (const auto& file : write_export(cell)) fmt::print("wrote {}\n", file);
    } catch (const EnvironmentError&) {
      throw;                                 // its own message and fix
    } catch (const std::runtime_error& e) {  // util's file errors; the writer left no temp file
      std::fprintf(stderr,
                   "triton-portcheck: %s: free space there or choose a folder you can write to\n",
                   util::printable(e.what()).c_str());
      return exit_code::environment;
    }
  }
  return code;
}

int run_export_command(const ExportFlags& f) {
  CheckOptions options = f.options;
  options.targets = split_list(f.targets);
  options.only_rows = f.rows;
  options.export_dir = f.dir;
  prepare_output_folder(*options.export_dir, "-o");
  std::optional<ScratchDir> adhoc;
  if (!f.kernel.empty()) {
    adhoc.emplace("triton-portcheck-export");
    options.manifest = write_adhoc_manifest(f, adhoc->path());
    options.demo = false;
  }
  options.use_cache = false;  // the binaries themselves are wanted, not a verdict
  options.progress = !f.quiet && util::is_terminal(stderr);
  const auto report = run_check(options, interrupted());
  say_warnings(report);
  std::fputs(render_terminal(report, TerminalStyle{util::use_colour(stdout)}).c_str(), stdout);
  return write_exports(report);
}

void add_export_options(CLI::App* command, ExportFlags& f) {
  command->add_option("rows", f.rows, "Rows of the manifest to export (default: all)");
  command->add_option("-m,--manifest", f.options.manifest,
                      "Manifest file (default: portcheck.toml)");
  command->add_flag("--demo", f.options.demo, "Export rows of the bundled demo");
  command
      ->add_option("-t,--target,--targets", f.targets,
                   "Targets, comma-separated (cuda:90,hip:gfx942)")
      ->required();
  command
      ->add_option("-o,--output", f.dir, "Folder to write into (one subfolder per row and target)")
      ->required();
  command->add_option("--python", f.options.python, "Python interpreter holding Triton");
  command
      ->add_option("-j,--jobs", f.options.jobs, "Cells compiled at once (default: number of cores)")
      ->check(CLI::Range(1, 4096));  // -1 would wrap to 2^64-1 in a size_t
  command->add_flag("-q,--quiet", f.quiet, "No live progress line");
  command->add_option(
      "--kernel", f.kernel,
      "Instead of a manifest: module:function or file.py:function, with --signature, "
      "--constants, --options as TOML inline tables");
  command->add_option("--signature", f.signature, "e.g. '{ x_ptr = \"*fp32:16\", n = \"i32\" }'");
  command->add_option("--constants", f.constants, "e.g. '{ BLOCK = 1024 }'");
  command->add_option("--options", f.compile_options, "e.g. '{ num_warps = 4 }'");
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  auto* command = app.add_subcommand("export",
                                     "Write each row's binary, assembly, launch descriptor and "
                                     "C++ launcher for the given targets");
  add_export_options(command, *flags);
  command->footer(kExitCodes);
  return {command, [flags] { return run_export_command(*flags); }};
}

}  // namespace portcheck::cli
