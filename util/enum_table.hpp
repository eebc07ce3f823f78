#pragma once
#include <iterator>
#include <string_view>

namespace util {

// An enum's names, and whatever else belongs to each value, as one table read in both
// directions: each row has a `value` and a `name` member. A switch per direction would need one
// edit each for a new value; a table needs one row.

// The row of `value`, or nullptr when the table has none.
template <typename Table, typename Value>
constexpr auto row_of(const Table& table, const Value& value) -> decltype(&*std::begin(table)) {
  for (const auto& row : table)
    if (row.value == value) return &row;
  return nullptr;
}

// The row called `name`, or nullptr when the table has none.
template <typename Table>
constexpr auto row_named(const Table& table, std::string_view name)
    -> decltype(&*std::begin(table)) {
  for (const auto& row : table)
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace util
