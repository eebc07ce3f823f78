#include "src/report/terminal_text.hpp"

#include "util/text_escape.hpp"

namespace portcheck {
namespace {

void clean(std::string& text) { text = util::printable(text); }

void clean_all(std::vector<std::string>& texts) {
  for (auto& text : texts) clean(text);
}

// A string member `key` of the object `json`, when it is one.
void clean_member(nlohmann::json& json, const char* key) {
  if (json.is_object() && json.contains(key) && json[key].is_string())
    json[key] = util::printable(json[key].get<std::string>());
}

void clean_strings(nlohmann::json& array) {
  if (!array.is_array()) return;
  for (auto& item : array)
    if (item.is_string()) item = util::printable(item.get<std::string>());
}

// The environment strings the terminal's title line shows.
void clean_environment(nlohmann::json& env) {
  if (!env.is_object()) return;
  for (const char* part : {"triton", "python"})
    if (env.contains(part)) clean_member(env[part], "version");
  if (env.contains("tritons") && env["tritons"].is_array())
    for (auto& t : env["tritons"]) clean_member(t, "version");
}

void clean_cell(CellResult& c) {
  for (auto* text : {&c.kernel, &c.base_kernel, &c.variant, &c.target, &c.triton, &c.triton_version,
                     &c.stage, &c.pass, &c.message, &c.fingerprint, &c.why, &c.link})
    clean(*text);
  if (c.error_source) clean(c.error_source->file);
  if (c.kernel_source) clean(c.kernel_source->file);
  if (c.launch.is_object() && c.launch.contains("problems")) clean_strings(c.launch["problems"]);
}

}  // namespace

Report printable_report(const Report& report) {
  Report out = report;
  clean(out.tool_version);
  clean(out.manifest);
  clean_all(out.targets);
  clean_all(out.rows);
  clean_all(out.merged_from);
  clean_environment(out.environment);
  for (auto& c : out.cells) clean_cell(c);
  clean(out.baseline.origin);
  for (auto& f : out.baseline.fixed)
    for (auto* text : {&f.row, &f.target, &f.triton, &f.fingerprint, &f.kind, &f.message})
      clean(*text);
  return out;
}

}  // namespace portcheck
