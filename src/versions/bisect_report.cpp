#include "src/versions/bisect_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "src/core/ir_text.hpp"
#include "src/versions/diff.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"
#include "util/text_diff.hpp"

namespace portcheck {
namespace fs = std::filesystem;
namespace {

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

// The verdict and its message on one line, as the history and the boundary show it.
std::string verdict_line(const ReleaseVerdict& v) {
  std::string line = v.summary();
  const std::string& message = v.refused() ? v.refusal : v.cell.message;
  if (!message.empty()) line += ": " + std::string(first_line(message));
  return line;
}

// Time, binary size and resources, old -> new, where either side has them.
std::string changes_line(const CellResult& a, const CellResult& b) {
  std::vector<std::string> parts;
  if (a.compile_s > 0 || b.compile_s > 0)
    parts.push_back(fmt::format("compile {:.2f} s -> {:.2f} s", a.compile_s, b.compile_s));
  for (const char* binary : {"cubin", "hsaco"}) {
    const auto x = a.sizes.value(binary, nlohmann::json());
    const auto y = b.sizes.value(binary, nlohmann::json());
    if (!x.is_number() && !y.is_number()) continue;
    const auto shown = [](const nlohmann::json& n) {
      return n.is_number() ? util::format_bytes(n.get<std::uint64_t>()) : std::string("-");
    };
    parts.push_back(fmt::format("{} {} -> {}", binary, shown(x), shown(y)));
  }
  for (const char* resource : {"registers", "spills"}) {
    const auto x = a.resources.value(resource, nlohmann::json());
    const auto y = b.resources.value(resource, nlohmann::json());
    if (x.is_number() || y.is_number())
      parts.push_back(fmt::format("{} {} -> {}", resource, x.is_number() ? x.dump() : "-",
                                  y.is_number() ? y.dump() : "-"));
  }
  return util::join(parts, " · ");
}

const ReleaseVerdict* verdict_at(const RowBisection& row, const std::string& release) {
  const auto it = row.known.find(release);
  return it == row.known.end() ? nullptr : &it->second;
}

std::string render_boundary(const RowBisection& row, const BisectOutcome& outcome) {
  const auto& [before, after] = *row.boundary;
  const auto& old_verdict = row.known.at(before);
  const auto& new_verdict = row.known.at(after);
  std::string out = fmt::format(
      "first release with the new verdict: {} (the last with the old: {})\n", after, before);
  out += fmt::format("  {:<10} {}\n", before, verdict_line(old_verdict));
  out += fmt::format("  {:<10} {}\n", after, verdict_line(new_verdict));
  if (!old_verdict.refused() && !new_verdict.refused()) {
    if (const auto changes = changes_line(old_verdict.cell, new_verdict.cell); !changes.empty())
      out += "  " + changes + "\n";
    if (outcome.ir_dir)
      out += first_ir_difference(old_verdict.cell, new_verdict.cell, *outcome.ir_dir);
  }
  return out;
}

std::string render_history(const RowBisection& row, const BisectOutcome& outcome) {
  std::string out = "release    verdict\n";
  const ReleaseVerdict* previous = nullptr;
  for (const auto& release : outcome.releases) {
    const auto* v = verdict_at(row, release);
    if (v == nullptr) continue;
    const bool changed = previous != nullptr && previous->key() != v->key();
    out += fmt::format("{:<10} {}{}\n", release, verdict_line(*v), changed ? "   <- changed" : "");
    previous = v;
  }
  return out;
}

std::string render_one(const RowBisection& row, const BisectOutcome& outcome) {
  std::size_t compiled = row.known.size();
  std::string out = fmt::format("bisect {} on {}: triton {} .. {} ({} releases, {} compiled)\n",
                                row.row, outcome.target, outcome.releases.front(),
                                outcome.releases.back(), outcome.releases.size(), compiled);
  if (row.boundary) {
    out += render_boundary(row, outcome);
  } else if (const auto* v = verdict_at(row, outcome.releases.front())) {
    out += fmt::format("no change: {} in {} and in {}\n", verdict_line(*v),
                       outcome.releases.front(), outcome.releases.back());
  }
  if (outcome.all) out += "\n" + render_history(row, outcome);
  return out;
}

std::string render_many(const BisectOutcome& outcome) {
  std::string out =
      fmt::format("bisect on {}: triton {} .. {} ({} releases)\n", outcome.target,
                  outcome.releases.front(), outcome.releases.back(), outcome.releases.size());
  std::size_t width = 0;
  for (const auto& row : outcome.rows) width = std::max(width, row.row.size());
  std::size_t unchanged = 0;
  for (const auto& row : outcome.rows) {
    if (!row.boundary) {
      ++unchanged;
      continue;
    }
    const auto& [before, after] = *row.boundary;
    out += fmt::format("  {:<{}}  {} -> {}  {} -> {}\n", row.row, width, before, after,
                       row.known.at(before).summary(), row.known.at(after).summary());
  }
  out += fmt::format("{} rows changed, {} did not\n", outcome.rows.size() - unchanged, unchanged);
  return out;
}

nlohmann::json verdict_json(const ReleaseVerdict& v) {
  if (v.refused()) return {{"status", "refused"}, {"message", v.refusal}};
  const auto& c = v.cell;
  return {{"status", to_string(c.status)},
          {"kind", c.failed_outcome() ? nlohmann::json(to_string(c.kind)) : nlohmann::json()},
          {"stage", c.stage.empty() ? nlohmann::json() : nlohmann::json(c.stage)},
          {"fingerprint", c.fingerprint.empty() ? nlohmann::json() : nlohmann::json(c.fingerprint)},
          {"message", c.message},
          {"triton_version", c.triton_version},
          {"compile_s", c.compile_s},
          {"sizes", c.sizes},
          {"resources", c.resources}};
}

}  // namespace

std::string first_ir_difference(const CellResult& before, const CellResult& after,
                                const fs::path& ir_dir) {
  std::string renamed_only;  // stages that differ in SSA value names alone
  for (const auto& stage : ir_stages()) {
    const auto a = ir_file(ir_dir, before, stage);
    const auto b = ir_file(ir_dir, after, stage);
    if (!a && !b) continue;
    if (!a || !b)
      return fmt::format("  IR: {}{} only in {} (the other release stopped before it)\n",
                         renamed_only, stage, a ? before.triton_version : after.triton_version);
    const auto old_ir = normalize_ir(util::read_file(*a));
    const auto new_ir = normalize_ir(util::read_file(*b));
    if (old_ir == new_ir) continue;
    // Releases name values after the source differently (%rows, %c32_i32): not a change of code.
    if (without_value_names(old_ir) == without_value_names(new_ir)) {
      renamed_only += stage + " differs in SSA value names only; ";
      continue;
    }
    return fmt::format(
        "  IR: {}{} is the first stage that differs\n{}", renamed_only, stage,
        util::unified_diff(old_ir, new_ir, util::relative_if_inside(*a, ir_dir).string(),
                           util::relative_if_inside(*b, ir_dir).string(), 3));
  }
  return renamed_only.empty() ? "" : "  IR: " + renamed_only + "no other difference\n";
}

std::string render_bisect(const BisectOutcome& outcome) {
  if (outcome.rows.size() == 1) return render_one(outcome.rows.front(), outcome);
  return render_many(outcome);
}

nlohmann::json bisect_to_json(const BisectOutcome& outcome) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : outcome.rows) {
    nlohmann::json verdicts = nlohmann::json::object();
    for (const auto& release : outcome.releases)
      if (const auto* v = verdict_at(row, release)) verdicts[release] = verdict_json(*v);
    nlohmann::json entry = {{"row", row.row}, {"verdicts", verdicts}, {"boundary", nullptr}};
    if (row.boundary) {
      const auto& [before, after] = *row.boundary;
      entry["boundary"] = {{"last_old", before}, {"first_new", after}};
      const auto& a = row.known.at(before);
      const auto& b = row.known.at(after);
      if (outcome.ir_dir && !a.refused() && !b.refused())
        entry["ir_difference"] = first_ir_difference(a.cell, b.cell, *outcome.ir_dir);
    }
    rows.push_back(std::move(entry));
  }
  return {{"target", outcome.target},
          {"releases", outcome.releases},
          {"all", outcome.all},
          {"rows", rows}};
}

}  // namespace portcheck
