// The kernel signature parsers: a Triton type string ("*fp16:16", "i32") checked as the manifest
// does, and a specialisation as Triton's serialize_specialization_data writes it (what capture
// records and a manifest's `specialization` holds) turned into a manifest row. Neither may throw,
// crash or trip a sanitizer, whatever the text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/capture/capture_rows.hpp"
#include "src/core/manifest.hpp"
#include "src/core/specialization.hpp"
#include "util/bounded_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string why;
  (void)portcheck::is_valid_type_string(text, &why);
  nlohmann::json spec;
  try {
    spec = util::parse_json_bounded(text);
  } catch (const util::JsonInputError&) {
    return 0;
  }
  if (!portcheck::specialization_shape_problem(spec).empty())
    return 0;  // capture skips such records
  portcheck::CapturedLaunch launch;
  launch.specialization = spec;
  if (spec.is_object() && spec.contains("signature") && spec["signature"].is_object())
    for (const auto& [name, type] : spec["signature"].items()) launch.arg_names.push_back(name);
  launch.arg_names.emplace_back("absent");
  const auto row = portcheck::row_from_launch(launch);
  if (row.specialization) (void)util::parse_json_bounded(*row.specialization);
  return 0;
}
