#pragma once
#include <stdexcept>
#include <string>

namespace portcheck {

// Bad arguments or a bad manifest: exit code 2, one line naming file, line and key.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Triton missing, a broken Python environment, or a worker we cannot start: exit code 3.
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int new_failures = 1;
inline constexpr int usage = 2;
inline constexpr int environment = 3;
inline constexpr int internal = 4;
inline constexpr int interrupted = 130;
}  // namespace exit_code

}  // namespace portcheck
