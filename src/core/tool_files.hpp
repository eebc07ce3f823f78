#pragma once
#include <filesystem>

namespace portcheck {

// Where the tool's own files live: the Python worker, the demo, the data tables.
struct ShareDirs {
  std::filesystem::path worker;  // holds the portcheck_worker package
  std::filesystem::path demo;
  std::filesystem::path data;
  static ShareDirs locate();
};

// The folder of the running binary (/proc/self/exe), empty when it cannot be read.
std::filesystem::path executable_dir();

}  // namespace portcheck
