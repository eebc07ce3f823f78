#include "src/capture/capture_record.hpp"

#include "util/json_reader.hpp"

namespace portcheck {
namespace {

using nlohmann::json;
using util::optional_member;
using util::put_optional;

// The readers below run on a record the schema has checked.
CapturedLaunch read_launch(const json& j) {
  const auto& kernel = j.at("kernel");
  CapturedLaunch launch;
  launch.module = kernel.at("module").get<std::string>();
  launch.qualname = kernel.at("qualname").get<std::string>();
  launch.attribute = optional_member<std::string>(kernel, "attribute").value_or("");
  launch.file = kernel.at("file").get<std::string>();
  launch.line = kernel.at("line").get<int>();
  if (auto root = optional_member<std::string>(kernel, "import_root")) launch.import_root = *root;
  launch.arg_names = kernel.at("arg_names").get<std::vector<std::string>>();
  launch.not_importable = optional_member<std::string>(kernel, "not_importable").value_or("");
  launch.generated_source = optional_member<std::string>(kernel, "generated_source").value_or("");
  for (const auto& path : optional_member<std::vector<std::string>>(kernel, "generated_paths")
                              .value_or(std::vector<std::string>{}))
    launch.generated_paths.emplace_back(path);
  launch.specialization = j.at("specialization");
  launch.explicit_options = j.at("explicit_options");
  launch.site = j.at("site").get<std::string>();
  launch.test = j.at("test").get<std::string>();
  launch.persona = j.at("persona").get<std::string>();
  launch.identity = optional_member<std::string>(j, "identity").value_or("");
  launch.mode = j.at("mode").get<std::string>();
  launch.warmup = j.at("warmup").get<bool>();
  if (const auto& tuned = j.at("autotune"); !tuned.is_null())
    launch.autotune = CapturedLaunch::Autotune{optional_member<std::string>(tuned, "config"),
                                               optional_member<std::int64_t>(tuned, "count"),
                                               optional_member<std::int64_t>(tuned, "index")};
  return launch;
}

std::optional<std::string> unless_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional(text);
}

json nullable(const std::optional<std::string>& text) { return text ? json(*text) : json(); }

struct Message {
  json operator()(const CapturedLaunch& l) const {
    json kernel = {{"module", l.module},
                   {"qualname", l.qualname},
                   {"file", l.file.string()},
                   {"line", l.line},
                   {"attribute", nullable(unless_empty(l.attribute))},
                   {"import_root", l.import_root ? json(l.import_root->string()) : json()},
                   {"not_importable", nullable(unless_empty(l.not_importable))},
                   {"arg_names", l.arg_names}};
    put_optional(kernel, "generated_source", unless_empty(l.generated_source));
    if (!l.generated_paths.empty()) {
      kernel["generated_paths"] = json::array();
      for (const auto& path : l.generated_paths) kernel["generated_paths"].push_back(path.string());
    }
    json autotune;
    if (l.autotune) {
      autotune = json::object();
      put_optional(autotune, "config", l.autotune->config);
      put_optional(autotune, "count", l.autotune->count);
      put_optional(autotune, "index", l.autotune->index);
    }
    json out = {{"version", 1},
                {"mode", l.mode},
                {"kernel", kernel},
                {"specialization", l.specialization},
                {"explicit_options", l.explicit_options},
                {"autotune", autotune},
                {"warmup", l.warmup},
                {"site", l.site},
                {"test", l.test},
                {"persona", l.persona}};
    put_optional(out, "identity", unless_empty(l.identity));
    return out;
  }
  json operator()(const CapturedAutotunedLaunch& a) const {
    return {{"version", 1}, {"autotuned", {{"configs", a.configs}, {"persona", a.persona}}}};
  }
  json operator()(const CaptureWarning& w) const {
    return {{"version", 1}, {"warning", w.warning}};
  }
};

}  // namespace

Checked<CaptureRecord> read_capture_record(const json& line) {
  if (auto problem = protocol_problem("capture_record", line))
    return {std::nullopt, std::move(*problem)};
  if (line.contains("warning")) return {CaptureWarning{line.at("warning").get<std::string>()}, ""};
  if (const auto tuned = line.find("autotuned"); tuned != line.end())
    return {CapturedAutotunedLaunch{tuned->at("configs").get<std::vector<std::string>>(),
                                    tuned->at("persona").get<std::string>()},
            ""};
  return {read_launch(line), ""};
}

json record_message(const CaptureRecord& record) { return std::visit(Message{}, record); }

}  // namespace portcheck
