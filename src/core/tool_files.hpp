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

// The checkout the running binary was built in (<checkout>/build/triton-portcheck: its parent
// holds the Makefile, CMakeLists.txt and the worker), or empty for an installed tool (pip).
std::filesystem::path checkout_root();

}  // namespace portcheck
