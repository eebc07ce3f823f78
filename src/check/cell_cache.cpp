#include "src/check/cell_cache.hpp"

#include "src/run/cell_answer_read.hpp"

namespace portcheck {
namespace {

nlohmann::json rebased(const nlohmann::json& entry, const std::filesystem::path& origin) {
  const auto old_origin = entry.value("origin", "");
  if (old_origin.empty() || old_origin == origin.string()) return entry;
  std::string text = entry.dump();
  const auto from = nlohmann::json(old_origin).dump();  // escaped as it appears in JSON
  const auto to = nlohmann::json(origin.string()).dump();
  const auto inner_from = from.substr(1, from.size() - 2);
  const auto inner_to = to.substr(1, to.size() - 2);
  for (std::size_t pos = 0; (pos = text.find(inner_from, pos)) != std::string::npos;
       pos += inner_to.size())
    text.replace(pos, inner_from.size(), inner_to);
  return nlohmann::json::parse(text);
}

}  // namespace

nlohmann::json cache_entry(const std::string& key, const CellEvidence& evidence,
                           const std::filesystem::path& origin) {
  return {{"key", key},
          {"origin", origin.string()},
          {"result", evidence.result->message()},
          {"stderr", evidence.stderr_text},
          {"last_stage", evidence.last_stage},
          {"wall_s", evidence.outcome.wall_seconds},
          {"peak_rss_bytes", evidence.outcome.peak_rss_bytes}};
}

std::optional<CellEvidence> evidence_from_cache(const nlohmann::json& stored,
                                                const std::filesystem::path& origin) {
  const auto entry = rebased(stored, origin);
  CellEvidence evidence;
  evidence.outcome.how = Termination::exited;
  evidence.outcome.wall_seconds = entry.value("wall_s", 0.0);
  // The store checked the entry's result as a compile_result when it loaded it
  // (run/cache_entry_schema.hpp); read here after its paths moved, which must leave it one.
  evidence.result = try_read_cell_answer("compile_result", entry.at("result")).value;
  if (!evidence.result) return std::nullopt;
  evidence.stderr_text = entry.value("stderr", "");
  evidence.last_stage = entry.value("last_stage", "");
  return evidence;
}

bool cacheable(const CellEvidence& evidence, const CellResult& cell) {
  return evidence.outcome.how == Termination::exited && evidence.outcome.exit_code == 0 &&
         evidence.result.has_value() && cell.kind != FailureKind::internal_error &&
         cell.kind != FailureKind::timeout && cell.kind != FailureKind::crash &&
         cell.kind != FailureKind::oom;
}

}  // namespace portcheck
