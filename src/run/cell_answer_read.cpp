#include "src/run/cell_answer_read.hpp"

namespace portcheck {

CellAnswer read_cell_answer(std::string_view kind, const nlohmann::json& message) {
  auto checked = try_read_cell_answer(kind, message);
  if (!checked.value)
    throw ProtocolError("protocol error: " + worker_breach(kind, checked.problem));
  return std::move(*checked.value);
}

Checked<CellAnswer> try_read_cell_answer(std::string_view kind, const nlohmann::json& message) {
  if (auto problem = protocol_problem(kind, message)) return {std::nullopt, std::move(*problem)};
  return {convert_checked_answer(kind, message), ""};
}

}  // namespace portcheck
