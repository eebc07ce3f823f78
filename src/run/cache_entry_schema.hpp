#pragma once
// What a result-cache entry may hold, field by field: the entry's own fields, with their types,
// and its worker result, a compile_result of the protocol (worker_protocol.hpp, the one
// definition of what the worker writes), checked when the entry is loaded, from
// the local cache or a shared one alike. A sealed entry whose checksum holds can still have been
// forged (the checksum is integrity, not authentication) or written by a damaged build: one with
// a field of the wrong type, a field the worker never writes, or a failure without its error is a
// miss, said once, never an exception later or a verdict made up from it.
#include <string>

#include <nlohmann/json.hpp>

namespace portcheck {

// Empty when `entry` is well formed; else what is wrong ("result.error.traceback is not text").
std::string cache_entry_problem(const nlohmann::json& entry);

}  // namespace portcheck
