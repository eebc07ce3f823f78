#pragma once
// Which zygote of the fork server may fork a request's process, decided here alone: the worker
// keys its zygotes by what a request carries (its "zygote" member, protocol.schema.json;
// python/portcheck_worker/server/zygote_pool.py), and the scheduler groups and batches cells by
// the same key (check/cell_run.cpp).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/core/manifest.hpp"
#include "src/core/target.hpp"

namespace portcheck {

// The cells of one target, import folders and top-level package or file (or the folder of
// kernels `capture` saved, which all import one library) share a zygote. `target` empty: the key
// of the inspections' zygote, which imports the package for no target. Empty when no zygote can
// serve the kernel (it names neither a module nor a file).
std::string zygote_key(const KernelRef& ref, std::string_view target);

// A request's "zygote" member: {"key": its zygote's key, "any_target": the key of the zygote
// that imported the package for no target (a compile may be forked from it when that import
// never asked Triton's driver)}, or null where no zygote can serve. `target` empty: an
// inspection's, whose two keys are the same.
nlohmann::json zygote_member(const KernelRef& ref, std::string_view target);

// What the fork server routes a cell's process by (fork_route, protocol.schema.json): the kind
// of its request, its zygote, the kernel and the target (null: none), as its request has them.
// The server routes by this, which its check of the fork command covers, and never reads the
// request file to route it. Null where no zygote can serve the kernel.
nlohmann::json fork_route(std::string_view kind, const KernelRef& ref, const Target* target);

}  // namespace portcheck
