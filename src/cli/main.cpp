// triton-portcheck's entry point: the CLI11 app with one registered Command per subcommand
// (command.hpp), the diagnosis of an unknown command, and the mapping of errors to exit codes.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "src/cli/command.hpp"
#include "src/cli/common.hpp"
#include "src/core/errors.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_escape.hpp"

namespace {

using namespace portcheck;

// `triton-portcheck bogus`, `env bogus`, a bare `cache`: CLI11 would only say that a subcommand
// is required. Names the word (or its absence) and lists the commands where one is expected;
// nothing when the words are known.
std::optional<std::string> unknown_command(const CLI::App& app,
                                           const std::vector<std::string_view>& args) {
  const CLI::App* current = &app;
  std::string path;  // "env ", the commands read so far
  for (std::size_t i = 0;; ++i) {
    if (current->get_require_subcommand_min() == 0 || (i < args.size() && args[i].starts_with("-")))
      return std::nullopt;
    std::vector<std::string> names;
    const CLI::App* next = nullptr;
    for (const auto* sub : current->get_subcommands([](const CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      if (i < args.size() && sub->get_name() == args[i]) next = sub;
    }
    const auto listed = fmt::format("the commands{} are: {} (see {}--help)",
                                    path.empty() ? "" : fmt::format(" of '{}'", util::trim(path)),
                                    util::join(names, ", "), path);
    if (i == args.size()) return fmt::format("a command is needed; {}", listed);
    if (next == nullptr) {
      const auto near = util::closest_match(args[i], names);
      return fmt::format("unknown command '{}{}'{}; {}", path, args[i],
                         near.empty() ? "" : fmt::format(" (did you mean '{}{}'?)", path, near),
                         listed);
    }
    path += fmt::format("{} ", args[i]);
    current = next;
  }
}

// Parses the command line; the exit code when that already ends the run (--help, --version, a
// command line CLI11 rejects), nullopt when a command is to run.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    const bool capture_without_separator = !args.empty() && args.front() == "capture" &&
                                           std::find(args.begin(), args.end(), "--") == args.end();
    std::fprintf(stderr, "triton-portcheck: %s%s\n", e.what(),
                 capture_without_separator
                     ? ": put the command after `--`, as in `triton-portcheck capture -- pytest "
                       "-q tests/`"
                     : " (see --help)");
    return exit_code::usage;
  }
  return std::nullopt;
}

// Runs the command the line chose; a user's mistake is one line and exit 2, a broken environment
// one line and exit 3, anything else a bug of ours (exit 4).
int run_chosen(const std::vector<cli::Command>& commands) {
  try {
    for (const auto& command : commands)
      if (*command.app) return command.run();
    throw std::logic_error("no command chosen");  // CLI11 requires one
  } catch (const UsageError& e) {
    // One line, whatever the message quotes (a name from a manifest, a string from a report).
    std::fprintf(stderr, "triton-portcheck: %s\n", util::printable(e.what()).c_str());
    return exit_code::usage;
  } catch (const EnvironmentError& e) {
    std::fprintf(stderr, "triton-portcheck: %s\n", util::printable(e.what()).c_str());
    return exit_code::environment;
  } catch (const util::WriteError& e) {
    if (const auto fix = e.disk_fix(); !fix.empty()) {
      std::fprintf(stderr, "triton-portcheck: %s: %s\n", e.what(), fix.c_str());
      return exit_code::environment;
    }
    std::fprintf(stderr, "triton-portcheck: internal error: %s\n", e.what());
    return exit_code::internal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "triton-portcheck: internal error: %s\n",
                 util::printable(e.what()).c_str());
    return exit_code::internal;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "triton-portcheck: compile Triton kernels for every GPU target, on a machine without a GPU,\n"
      "and show where each kernel x target breaks and why."};
  app.footer(cli::kExitCodes);
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(PORTCHECK_VERSION));
  const std::vector<cli::Command> commands = {
      cli::add_check_command(app),   cli::add_report_command(app), cli::add_merge_command(app),
      cli::add_export_command(app),  cli::add_repro_command(app),  cli::add_env_command(app),
      cli::add_diff_command(app),    cli::add_bisect_command(app), cli::add_cache_command(app),
      cli::add_capture_command(app), cli::add_targets_command(app)};

  if (const auto message = unknown_command(app, {argv + 1, argv + argc})) {
    std::fprintf(stderr, "triton-portcheck: %s\n", message->c_str());
    return exit_code::usage;
  }
  if (const auto code = parse_command_line(app, argc, argv)) return *code;
  cli::install_interrupt_handler();
  return run_chosen(commands);
}
