#include "src/check/reduce.hpp"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "util/ascii.hpp"

namespace portcheck {
namespace {

// "*fp32:16" -> "*fp32", "i32:16" -> "i32"; any other type string as it is.
std::string without_divisibility(const std::string& type) {
  const auto colon = type.rfind(':');
  if (colon == std::string::npos || colon + 1 == type.size()) return type;
  for (std::size_t i = colon + 1; i < type.size(); ++i)
    if (!util::ascii::is_digit(type[i])) return type;
  return type.substr(0, colon);
}

}  // namespace

std::string reduction_key(const KernelRow& row) {
  nlohmann::json signature = nlohmann::json::object();
  for (const auto& [name, type] : row.signature.items())
    signature[name] =
        type.is_string() ? nlohmann::json(without_divisibility(type.get<std::string>())) : type;
  // nlohmann's objects are ordered maps: the dump does not depend on the manifest's key order.
  return fmt::format("{}\n{}\n{}\n{}\n{}", row.ref.spelled(), signature.dump(),
                     row.constants.dump(), row.options.dump(), row.ref.import_root.string());
}

std::vector<std::size_t> representatives(const std::vector<PlannedCell>& cells) {
  std::map<const KernelRow*, std::string> key_of;  // a row has one key for all its targets
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> first;
  std::vector<std::size_t> out(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto [row_key, fresh] = key_of.try_emplace(cells[i].row);
    if (fresh) row_key->second = reduction_key(*cells[i].row);
    const auto key = std::make_tuple(row_key->second, cells[i].target.name(), cells[i].label);
    out[i] = first.emplace(key, i).first->second;
  }
  return out;
}

}  // namespace portcheck
