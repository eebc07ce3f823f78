// `triton-portcheck capture -- CMD`: a manifest row for every specialisation a test suite compiles.
#include "src/capture/capture.hpp"
#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"

namespace portcheck::cli {
namespace {

const char* const kCaptureFooter =
    "Example: triton-portcheck capture -o portcheck.toml -- pytest tests/\n"
    "Exit codes: 0 written (in record mode also when the tests fail, as they do there); 1 "
    "nothing launched by a command that succeeded; 2 bad arguments or manifest; 130 "
    "interrupted. Otherwise a failing command's own status wins, rows written (interpret and "
    "live modes) or nothing launched: pytest's 2 when collection failed, 5 when no test was "
    "selected. So 2 may be pytest's too: the last line on stderr says which.";

struct CaptureFlags {
  CaptureOptions options;
  std::string mode = "interpret";
  bool append = false, update = false;
  std::vector<std::string> raw_personas;
};

int run_capture_command(const CaptureFlags& f) {
  if (f.append && f.update) throw UsageError("--append and --update exclude each other");
  // --append keeps the rows already there as written, so it cannot add a persona to a row this
  // run launched again, and the row would then be checked only for its old personas' vendors.
  if (f.append && !f.raw_personas.empty())
    throw UsageError(
        "--append keeps existing rows as written and cannot add --as personas to them: capture "
        "every persona in one run (--update replaces the rows of the kernels it sees)");
  if (f.options.force && (f.append || f.update))
    throw UsageError("--force overwrites the manifest; it excludes --append and --update");
  CaptureOptions options = f.options;
  options.mode = parse_capture_mode(f.mode);
  options.personas = split_list(f.raw_personas);
  options.merge = f.update ? MergeMode::update : f.append ? MergeMode::append : MergeMode::create;
  return run_capture(options);
}

}  // namespace

Command add_capture_command(CLI::App& app) {
  auto flags = std::make_shared<CaptureFlags>();
  auto* capture = app.add_subcommand(
      "capture",
      "Run a command (your tests) and write a manifest row for every specialisation Triton "
      "compiles");
  capture->add_option("-o,--output", flags->options.output,
                      "Manifest to write (default: portcheck.toml)");
  capture
      ->add_option("--mode", flags->mode,
                   "interpret (default: CPU interpreter, tests pass), record (no GPU, kernels "
                   "not run), live (GPU: compiled and launched)")
      ->check(CLI::IsMember({"interpret", "record", "live"}));
  capture
      ->add_option("--as", flags->raw_personas,
                   "Run the command once as each of these devices (comma-separated targets, "
                   "e.g. cuda:90,hip:gfx942): host code that picks options by vendor or device "
                   "is told that target (interpret and record modes; default: cuda:90)")
      ->allow_extra_args(false);  // one value per --as: the command follows
  capture->add_flag("--fake-gpu", flags->options.fake_gpu,
                    "With --mode record: torch believes in one GPU of each persona and every "
                    "tensor is fake, so a script's torch.compile generates its GPU kernels "
                    "without a GPU (docs/capture.md)");
  capture->add_flag("--append", flags->append,
                    "Add the captured rows an existing manifest lacks; keep everything");
  capture->add_flag("--update", flags->update,
                    "Replace the rows captured earlier for the kernels seen now; keep "
                    "hand-written rows, comments and xfail lists");
  capture->add_flag("--force", flags->options.force, "Overwrite an existing manifest");
  capture->add_flag("-q,--quiet", flags->options.quiet, "Only warnings and the summary");
  capture->add_option("command", flags->options.command,
                      "The command to run, after `--` (e.g. -- pytest tests/)");
  capture->footer(kCaptureFooter);
  return {capture, [flags] { return run_capture_command(*flags); }};
}

}  // namespace portcheck::cli
