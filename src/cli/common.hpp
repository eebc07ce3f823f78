#pragma once
// What several subcommands share: the exit-code footer of their --help, list flags, sizes,
// time limits.
#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "src/core/report.hpp"

namespace portcheck::cli {

// The footer of --help for the commands that follow the tool's exit codes.
extern const char* const kExitCodes;

// "-t cuda:80,cuda:90 -t hip:gfx942" -> three names (and the same for --triton)
std::vector<std::string> split_list(const std::vector<std::string>& raw);

// A size flag such as --max-rss 8GiB; throws UsageError "<flag>: '<text>' is not a size such as
// <example>" for text that is not a size, or is zero.
std::uint64_t positive_size(const std::string& text, const std::string& flag,
                            const std::string& example);

// --timeout TEXT: a number of seconds the supervisor can enforce (timeout_problem); throws
// UsageError "--timeout TEXT: ..." for anything else (-1, nan, 0, inf, words).
double parse_timeout(const std::string& text);

// TRITON_PORTCHECK_CACHE_MAX bounds the result cache (default 512MiB).
std::uint64_t cache_bound();

// Set by SIGINT and SIGTERM once install_interrupt_handler() ran: a check then stops starting
// cells and reports the finished ones (exit 130).
const std::atomic<bool>& interrupted();

// The run's warnings on stderr, "triton-portcheck: warning: ...", each once: those in `said`
// (a command that runs several checks, as bisect does) are not said again, and are added to it.
void say_warnings(const Report& report, std::set<std::string>* said = nullptr);
void install_interrupt_handler();

}  // namespace portcheck::cli
