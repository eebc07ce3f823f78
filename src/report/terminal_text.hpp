#pragma once
#include "src/core/report.hpp"

namespace portcheck {

// `report` with every string a terminal or a CI log shows made inert (util::printable, one line
// each): escape sequences, carriage returns, backspaces and newlines in a compiler's message, a
// row name or a string of a crafted JSON report are shown escaped instead of acting on the
// terminal or faking lines of ours. Logs and other fields no terminal view shows are left as they
// are.
Report printable_report(const Report& report);

}  // namespace portcheck
