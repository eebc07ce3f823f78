#pragma once
#include <chrono>
#include <string>

namespace util {

// "2026-12-01T21:10:56Z": the time in UTC, as reports and markers record it.
std::string iso_time_utc(std::chrono::system_clock::time_point t);

}  // namespace util
