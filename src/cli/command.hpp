#pragma once
// cli/: the command line, the top layer. main.cpp sets the CLI11 app up, dispatches and maps
// errors to exit codes; each subcommand (or group of them) has one file that registers its
// options and runs it. It may include every other layer.
#include <functional>

#include <CLI/CLI.hpp>

namespace portcheck::cli {

// A registered subcommand: CLI11 marks `app` when the command line chose it, and `run` then runs
// it with the options parsed into state its closure owns. Returns the exit code; throws
// UsageError (2) or EnvironmentError (3), which main() reports in one line.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// One per subcommand, in the order `--help` lists them.
Command add_check_command(CLI::App& app);    // check_command.cpp
Command add_report_command(CLI::App& app);   // report_command.cpp
Command add_merge_command(CLI::App& app);    // report_command.cpp
Command add_export_command(CLI::App& app);   // export_command.cpp
Command add_repro_command(CLI::App& app);    // repro_command.cpp
Command add_env_command(CLI::App& app);      // env_command.cpp: add, list, remove
Command add_diff_command(CLI::App& app);     // diff_command.cpp
Command add_bisect_command(CLI::App& app);   // bisect_command.cpp
Command add_cache_command(CLI::App& app);    // cache_command.cpp: stats, clean
Command add_capture_command(CLI::App& app);  // capture_command.cpp
Command add_targets_command(CLI::App& app);  // targets_command.cpp

}  // namespace portcheck::cli
