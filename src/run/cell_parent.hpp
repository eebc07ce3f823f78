#pragma once
#include <filesystem>

namespace portcheck {

// The worker of `--isolation process` runs a cell's user code in a child it forks and waits for
// (python/portcheck_worker/cell/child.py), so that code never runs in our own child: a
// `kill(getppid())` there kills the worker, not triton-portcheck. The worker passes a child's
// signal on by dying of it, and marks the cell's progress file before the fork and after the
// child ended. A worker that died of a signal between the two marks was killed by its child,
// the cell's own code: that cell's crash, which this tells from the child's own signal.
bool killed_by_its_child(const std::filesystem::path& progress_path);

}  // namespace portcheck
