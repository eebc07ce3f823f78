// capture's TOML writer, by its round-trip property: the manifest it writes for any kernel rows
// a capture can produce parses back (load_manifest) to the same rows - signature, constants,
// options and specialisation - and merging those rows into any existing text never crashes.
// The input is JSON: {"name", "rows": [{"variant", "signature", "constants", "options",
// "specialization", "captured"}], "existing": text, "mode": 0..2}; what capture never produces
// (an invalid name or type string, null values) is skipped, not reported.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "src/capture/manifest_writer.hpp"
#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "src/core/specialization.hpp"
#include "util/bounded_json.hpp"
#include "util/fs.hpp"

namespace {

using nlohmann::json;
using portcheck::CapturedKernel;
using portcheck::CapturedRow;

bool name_ok(const json& j, const char* extra) {
  if (!j.is_string() || j.get<std::string>().empty() || j.get<std::string>().size() > 100)
    return false;
  for (const char ch : j.get<std::string>())
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' &&
        std::string_view(extra).find(ch) == std::string_view::npos)
      return false;
  return true;
}

// A constant or option as capture writes them: a scalar or a list of scalars, no null, integers
// TOML can hold.
bool value_ok(const json& v, bool allow_list = true) {
  if (v.is_array() && allow_list)
    return std::all_of(v.begin(), v.end(), [](const json& e) { return value_ok(e, false); });
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() <= INT64_MAX;
  return v.is_string() || v.is_boolean() || v.is_number();
}

std::optional<portcheck::OrderedFields> fields(const json& row, const char* key, bool types) {
  portcheck::OrderedFields out;
  if (!row.contains(key)) return out;
  if (!row[key].is_object()) return std::nullopt;
  for (const auto& [k, v] : row[key].items()) {
    if (types ? !(v.is_string() && portcheck::is_valid_type_string(v.get<std::string>()))
              : !value_ok(v))
      return std::nullopt;
    out.emplace_back(k, v);
  }
  return out;
}

std::optional<CapturedRow> row_of(const json& j) {
  if (!j.is_object()) return std::nullopt;
  CapturedRow row;
  if (j.contains("variant")) {
    if (!name_ok(j["variant"], ".+=-")) return std::nullopt;
    row.variant = j["variant"].get<std::string>();
  }
  auto signature = fields(j, "signature", true);
  auto constants = fields(j, "constants", false);
  auto options = fields(j, "options", false);
  if (!signature || !constants || !options) return std::nullopt;
  for (const auto& [name, value] : *constants)
    if (j.contains("signature") && j["signature"].contains(name))
      return std::nullopt;  // the manifest refuses both
  row.signature = *signature;
  row.constants = *constants;
  row.options = *options;
  if (j.contains("specialization")) {
    // What capture writes has passed the manifest's own shape check (read_capture_records).
    if (!portcheck::specialization_shape_problem(j["specialization"]).empty()) return std::nullopt;
    row.specialization = j["specialization"].dump();
    row.signature.clear();
    row.constants.clear();
    row.options.clear();
  }
  if (j.contains("captured") && j["captured"].is_string()) row.captured = j["captured"];
  return row;
}

std::optional<CapturedKernel> kernel_of(const json& j) {
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array() || j["rows"].empty() ||
      !j.contains("name") || !name_ok(j["name"], ".+-"))
    return std::nullopt;
  CapturedKernel kernel;
  kernel.name = j["name"];
  kernel.target = "kernels:f";
  std::set<std::string> variants;
  for (const auto& r : j["rows"]) {
    auto row = row_of(r);
    if (!row || !variants.insert(row->variant).second) return std::nullopt;
    kernel.rows.push_back(std::move(*row));
  }
  // One row has no variant name; several all have one (capture's name_rows).
  if ((kernel.rows.size() == 1) != kernel.rows.front().variant.empty()) return std::nullopt;
  if (kernel.rows.size() > 1 && variants.count("")) return std::nullopt;
  return kernel;
}

json object_of(const portcheck::OrderedFields& fields) {
  json out = json::object();
  for (const auto& [k, v] : fields) out[k] = v;
  return out;
}

// Every written row comes back with what it was written with.
void check_round_trip(const CapturedKernel& kernel, const portcheck::Manifest& manifest) {
  for (const auto& row : kernel.rows) {
    const auto name = row.variant.empty() ? kernel.name : kernel.name + "[" + row.variant + "]";
    const auto it = std::find_if(manifest.rows.begin(), manifest.rows.end(),
                                 [&](const auto& r) { return r.display_name() == name; });
    if (it == manifest.rows.end()) std::abort();
    if (it->signature != object_of(row.signature) || it->constants != object_of(row.constants) ||
        it->options != object_of(row.options) ||
        (row.specialization.has_value() != it->specialization.has_value()) ||
        (row.specialization &&
         json::parse(*row.specialization) != json::parse(*it->specialization)))
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const util::TempDir dir("portcheck-fuzz-toml-writer");
  json input;
  try {
    input = util::parse_json_bounded(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const util::JsonInputError&) {
    return 0;
  }
  const auto kernel = kernel_of(input);
  if (!kernel) return 0;
  const auto file = dir.path() / "portcheck.toml";
  const auto written = portcheck::render_captured_manifest({*kernel}, {"written by the fuzzer"});
  std::ofstream(file, std::ios::trunc) << written.text;
  try {
    check_round_trip(*kernel, portcheck::load_manifest(file));
  } catch (const portcheck::UsageError& e) {
    std::fprintf(stderr, "the writer's manifest does not load: %s\n%s\n", e.what(),
                 written.text.c_str());
    std::abort();
  }
  if (input.contains("existing") && input["existing"].is_string()) {
    const auto mode = static_cast<portcheck::MergeMode>(input.contains("mode") &&
                                                                input["mode"].is_number_unsigned()
                                                            ? input["mode"].get<std::uint64_t>() % 3
                                                            : 0);
    try {
      (void)portcheck::merge_captured_manifest(file, input["existing"], {*kernel}, mode);
    } catch (const portcheck::UsageError&) {
    }
  }
  return 0;
}
