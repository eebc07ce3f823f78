#include "src/core/cell.hpp"

#include <cstddef>

#include <fmt/format.h>

#include "util/enum_table.hpp"

namespace portcheck {
namespace {

// Rows in enum order, so that a row cannot be filed under another value unnoticed.
template <typename Table>
constexpr bool in_enum_order(const Table& table) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (static_cast<std::size_t>(table[i].value) != i) return false;
  return true;
}
static_assert(in_enum_order(kStatuses));
static_assert(in_enum_order(kFailureKinds));

}  // namespace

std::string to_string(Status status) {
  const auto* row = util::row_of(kStatuses, status);
  return std::string(row != nullptr ? row->name : "?");
}

std::string to_string(FailureKind kind) {
  const auto* row = util::row_of(kFailureKinds, kind);
  return std::string(row != nullptr ? row->name : "?");
}

std::optional<Status> status_from_string(const std::string& text) {
  const auto* row = util::row_named(kStatuses, text);
  return row != nullptr ? std::optional(row->value) : std::nullopt;
}

std::optional<FailureKind> kind_from_string(const std::string& text) {
  const auto* row = util::row_named(kFailureKinds, text);
  return row != nullptr ? std::optional(row->value) : std::nullopt;
}

std::string short_label(FailureKind kind) {
  const auto* row = util::row_of(kFailureKinds, kind);
  return std::string(row != nullptr ? row->label : "?");
}

bool failed_in_compile(FailureKind kind) {
  const auto* row = util::row_of(kFailureKinds, kind);
  return row != nullptr && row->compiled;
}

std::string autotuner_note(const CellResult& cell) {
  if (!cell.autotuned) return "";
  const auto& launch = *cell.autotuned;
  if (cell.status == Status::skipped)
    return fmt::format(
        "left to the autotuner, which skips a config raising {}: {} of {} configs "
        "of launch {} remain on {}",
        cell.autotuner_raises, launch.remaining, launch.configs, launch.name, cell.target);
  if (cell.failed_outcome() && cell.autotuner_skips && launch.remaining == 0)
    return fmt::format(
        "no config of launch {} is left on {}: the autotuner skips each of its {}, "
        "then launches one all the same, which raises",
        launch.name, cell.target, launch.configs);
  return "";
}

std::string host_choices_note(const CellResult& cell) {
  if (!cell.foreign_launch_verdict()) return "";
  std::string personas;
  for (const auto& persona : cell.host_choices_of)
    personas += (personas.empty() ? "" : ", ") + persona;
  return fmt::format(
      "not new: these options are what {}'s host code chose; `capture --as {}` records what {} is "
      "launched with",
      personas, cell.target, cell.target);
}

std::string bracketed_host_choices_note(const CellResult& cell) {
  const auto note = host_choices_note(cell);
  return note.empty() ? note : " [" + note + "]";
}

}  // namespace portcheck
