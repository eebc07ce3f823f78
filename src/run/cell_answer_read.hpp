#pragma once
// Where a cell's answer enters the tool (a result file, the result cache, an inspection's
// failure): the protocol's check and the conversion into src/core/cell_answer.hpp's struct, in
// one place, so that everything after reads the struct.
#include <string_view>

#include <nlohmann/json.hpp>

#include "src/core/cell_answer.hpp"
#include "src/run/worker_protocol.hpp"

namespace portcheck {

// `message` checked as a `kind` (compile_result, repro_answer, reproducer_result or
// cell_failure) and converted; throws ProtocolError (worker_protocol.hpp) naming the member that
// breaks the schema.
[[nodiscard]] CellAnswer read_cell_answer(std::string_view kind, const nlohmann::json& message);

// The same, for a reader that says a breach in its own words.
[[nodiscard]] Checked<CellAnswer> try_read_cell_answer(std::string_view kind,
                                                       const nlohmann::json& message);

}  // namespace portcheck
