#pragma once
// When a cell forked from a threaded process (a zygote whose import left threads running) must be
// run again in a fresh one: fork() copies only the forking thread, so a lock another thread held
// at that moment stays held in the cell, and a library that notices it was forked (CUDA, torch)
// refuses to work there. Such a hazard shows as a hang, a crash, memory run wild, an import that
// fails, a worker that failed outside the compile, or an exception saying "fork". A compiler
// error with no such mention is the compiler's answer, which a fork does not change.
//
// A hang on a lock is a wait: a timeout is the hazard's only when the cell had stalled, using
// almost no CPU before its limit (`outcome.stalled`, run/stall.hpp). One that computed until the
// limit (a compiler that does not end, a `while True`) is a real timeout, and a rerun would only
// double its time.
#include "src/check/classify.hpp"
#include "src/run/process_runner.hpp"

namespace portcheck {

[[nodiscard]] bool fork_hazard_could_explain(const Classification& verdict,
                                             const ProcessOutcome& outcome);

}  // namespace portcheck
