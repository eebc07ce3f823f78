#pragma once
// The hostile strings every output format is tested on (tests/unit/data/hostile_strings.json,
// shared with tests/integration/test_output_injection.py): name -> text.
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace portcheck::test_support {

inline std::map<std::string, std::string> hostile_strings() {
  std::ifstream in(std::string(PORTCHECK_TEST_DATA) + "/hostile_strings.json");
  const nlohmann::json all = nlohmann::json::parse(in);
  std::map<std::string, std::string> out;
  for (auto it = all.begin(); it != all.end(); ++it)
    if (it.key().front() != '_') out[it.key()] = it.value().get<std::string>();
  return out;
}

// Every hostile string in one, for a field that should survive all of them at once.
inline std::string all_hostile_strings() {
  std::string all;
  for (const auto& [name, text] : hostile_strings()) all += text + " ";
  return all;
}

}  // namespace portcheck::test_support
