#include "src/versions/diff.hpp"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

using Mode = DiffSelection::Mode;

bool passing(const CellResult& c) { return c.status == Status::ok || c.status == Status::xpass; }

// Two failures are the same when their fingerprints are; reports without fingerprints fall back
// to what the fingerprint is made of.
std::string failure_identity(const CellResult& c) {
  if (!c.fingerprint.empty()) return c.fingerprint;
  return fmt::format("{}|{}|{}|{}", to_string(c.kind), c.stage, c.pass, c.message);
}

// ---- selection ----------------------------------------------------------------------------------

std::string available_labels(const Report& report) {
  std::vector<std::string> seen;
  for (const auto& c : report.cells) {
    auto label = c.triton_version.empty() || c.triton_version == c.triton
                     ? c.triton
                     : fmt::format("{} ({})", c.triton, c.triton_version);
    if (std::find(seen.begin(), seen.end(), label) == seen.end()) seen.push_back(label);
  }
  return seen.empty() ? "none" : util::join(seen, ", ");
}

std::string available_targets(const Report& report) {
  std::vector<std::string> seen = report.targets;
  for (const auto& c : report.cells)
    if (std::find(seen.begin(), seen.end(), c.target) == seen.end()) seen.push_back(c.target);
  return seen.empty() ? "none" : util::join(seen, ", ");
}

// Cells of Triton `label`: by environment label, else (when no cell has that label) by version.
std::vector<const CellResult*> cells_of_triton(const Report& report, const std::string& label) {
  std::vector<const CellResult*> out;
  for (const auto& c : report.cells)
    if (c.triton == label) out.push_back(&c);
  if (out.empty())
    for (const auto& c : report.cells)
      if (c.triton_version == label) out.push_back(&c);
  if (out.empty())
    throw UsageError(fmt::format("diff: no cells of Triton '{}' in the report (it has: {})", label,
                                 available_labels(report)));
  return out;
}

std::vector<const CellResult*> cells_of_target(const Report& report, const std::string& target) {
  std::vector<const CellResult*> out;
  for (const auto& c : report.cells)
    if (c.target == target) out.push_back(&c);
  if (out.empty())
    throw UsageError(fmt::format("diff: no cells of target '{}' in the report (it has: {})", target,
                                 available_targets(report)));
  return out;
}

std::string match_key(const CellResult& c, Mode mode) {
  switch (mode) {
    case Mode::versions:
      return c.kernel + '\x1f' + c.target;
    case Mode::targets:
      return c.kernel + '\x1f' + c.triton;
    case Mode::runs:
      break;
  }
  return c.kernel + '\x1f' + c.target + '\x1f' + c.triton;
}

// ---- metrics ------------------------------------------------------------------------------------

struct MetricSpec {
  const char* field;  // sizes, resources, metadata
  const char* key;
  const char* label;
  bool bytes;
};

constexpr MetricSpec kMetrics[] = {
    {"sizes", "cubin", "cubin", true},
    {"sizes", "ptx", "ptx", true},
    {"sizes", "llir", "llir", true},
    {"sizes", "hsaco", "hsaco", true},
    {"sizes", "amdgcn", "amdgcn", true},
    {"resources", "registers", "registers", false},
    {"resources", "local_bytes", "spills", true},
    {"resources", "vgprs", "vgprs", false},
    {"resources", "sgprs", "sgprs", false},
    {"resources", "vgpr_spills", "vgpr spills", false},
    {"resources", "sgpr_spills", "sgpr spills", false},
    {"metadata", "shared", "shared", true},
    {"metadata", "num_stages", "num_stages", false},
};

const nlohmann::json& field_of(const CellResult& c, std::string_view field) {
  if (field == "sizes") return c.sizes;
  if (field == "resources") return c.resources;
  return c.metadata;
}

std::optional<double> number_at(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

constexpr double kEpsilon = 1e-9;

std::vector<MetricChange> metric_changes(const CellResult& o, const CellResult& n,
                                         const DiffOptions& options) {
  std::vector<MetricChange> out;
  for (const auto& spec : kMetrics) {
    const auto before = number_at(field_of(o, spec.field), spec.key);
    const auto after = number_at(field_of(n, spec.field), spec.key);
    if (!before || !after || *before == *after) continue;
    MetricChange m{fmt::format("{}.{}", spec.field, spec.key),
                   spec.label,
                   spec.bytes,
                   *before,
                   *after,
                   std::nullopt};
    if (*before != 0) {
      const double relative = (*after - *before) / std::abs(*before);
      if (std::abs(relative) + kEpsilon < options.size_threshold) continue;
      m.percent = relative * 100;
    }
    out.push_back(std::move(m));
  }
  return out;
}

bool slower_to_compile(const CellResult& o, const CellResult& n, const DiffOptions& options) {
  if (o.compile_s <= 0 || n.compile_s <= 0) return false;
  return n.compile_s + kEpsilon >= options.time_ratio * o.compile_s &&
         n.compile_s - o.compile_s + kEpsilon >= options.time_min_seconds;
}

}  // namespace

DiffResult diff_reports(const Report& old_report, const Report& new_report,
                        const DiffSelection& selection, const DiffOptions& options) {
  DiffResult result;
  result.selection = selection;
  result.options = options;

  std::vector<const CellResult*> olds, news;
  switch (selection.mode) {
    case Mode::versions:
      if (selection.a == selection.b)
        throw UsageError(fmt::format("diff: compare two different Triton versions, not '{}' twice",
                                     selection.a));
      olds = cells_of_triton(old_report, selection.a);
      news = cells_of_triton(new_report, selection.b);
      break;
    case Mode::targets:
      if (selection.a == selection.b)
        throw UsageError(
            fmt::format("diff: compare two different targets, not '{}' twice", selection.a));
      olds = cells_of_target(old_report, selection.a);
      news = cells_of_target(new_report, selection.b);
      break;
    case Mode::runs:
      for (const auto& c : old_report.cells) olds.push_back(&c);
      for (const auto& c : new_report.cells) news.push_back(&c);
      break;
  }

  std::unordered_map<std::string, std::size_t> new_index;
  for (std::size_t i = 0; i < news.size(); ++i)
    new_index.emplace(match_key(*news[i], selection.mode), i);
  std::vector<bool> used(news.size(), false);

  for (const auto* o : olds) {
    const auto it = new_index.find(match_key(*o, selection.mode));
    if (it == new_index.end() || used[it->second]) {
      result.only_in_old.push_back({o->kernel, *o, std::nullopt, {}});
      continue;
    }
    used[it->second] = true;
    const auto* n = news[it->second];
    CellChange change{o->kernel, *o, *n, {}};
    ++result.compared;
    if (o->status == Status::unchecked || n->status == Status::unchecked) {
      result.not_compared.push_back(std::move(change));
    } else if (passing(*o) && n->failed_outcome()) {
      result.regressed.push_back(std::move(change));
    } else if (o->failed_outcome() && passing(*n)) {
      result.fixed.push_back(std::move(change));
    } else if (o->failed_outcome() && n->failed_outcome()) {
      if (failure_identity(*o) == failure_identity(*n))
        ++result.unchanged;
      else
        result.fail_differently.push_back(std::move(change));
    } else {
      ++result.unchanged;
      if (slower_to_compile(*o, *n, options)) result.slower.push_back(change);
      change.metrics = metric_changes(*o, *n, options);
      if (!change.metrics.empty()) result.changed.push_back(std::move(change));
    }
  }
  std::set<std::string> tritons;
  for (const auto* list : {&olds, &news})
    for (const auto* c : *list) tritons.insert(c->triton);
  result.several_tritons = tritons.size() > 1;
  for (std::size_t i = 0; i < news.size(); ++i)
    if (!used[i]) result.only_in_new.push_back({news[i]->kernel, std::nullopt, *news[i], {}});
  return result;
}

// ---- terminal -----------------------------------------------------------------------------------

namespace {

constexpr const char* kRed = "\033[31m";
constexpr const char* kGreen = "\033[32m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kDim = "\033[2m";
constexpr const char* kReset = "\033[0m";

struct Painter {
  bool colour;
  [[nodiscard]] std::string operator()(const std::string& text, const char* code) const {
    return colour ? fmt::format("{}{}{}", code, text, kReset) : text;
  }
};

std::string side_name(const DiffResult& r, bool old_side) {
  const auto& name = old_side ? r.selection.a : r.selection.b;
  return r.selection.mode == Mode::versions ? "triton " + name : name;
}

const CellResult& any_cell(const CellChange& c) { return c.old_cell ? *c.old_cell : *c.new_cell; }

template <typename F>
void for_each_change(const DiffResult& r, F&& f) {
  for (const auto* list : {&r.regressed, &r.fixed, &r.fail_differently, &r.not_compared, &r.slower,
                           &r.changed, &r.only_in_old, &r.only_in_new})
    for (const auto& c : *list) f(c);
}

// The words that tell the cells of one row apart, given what the mode holds equal.
struct Namer {
  Mode mode;
  bool several_tritons;

  [[nodiscard]] std::string operator()(const CellChange& change) const {
    const auto& c = any_cell(change);
    std::string name = change.row;
    if (mode != Mode::targets) name += " on " + c.target;
    if (mode != Mode::versions && several_tritons) name += fmt::format(" (triton {})", c.triton);
    return name;
  }
};

Namer namer_for(const DiffResult& r) { return {r.selection.mode, r.several_tritons}; }

std::string outcome(const CellResult& c) {
  if (passing(c) || c.kind == FailureKind::none) return to_string(c.status);
  std::string s = to_string(c.kind);
  if (!c.stage.empty()) s += " in " + c.stage;
  if (!c.pass.empty()) s += fmt::format(" ({})", c.pass);
  if (c.status == Status::xfail) s += ", expected";
  return s;
}

std::string message_of(const CellResult& c) { return std::string(util::trim(c.message)); }

std::string format_value(double value, bool bytes) {
  if (bytes && value >= 0) return util::format_bytes(static_cast<std::uint64_t>(value));
  if (value == std::floor(value) && std::abs(value) < 1e15)
    return fmt::format("{}", static_cast<long long>(value));
  return fmt::format("{:g}", value);
}

std::string format_metric(const MetricChange& m) {
  const auto change = m.percent ? fmt::format("{:+.1f}%", *m.percent) : std::string("new");
  return fmt::format("{} {} -> {} ({})", m.label, format_value(m.old_value, m.bytes),
                     format_value(m.new_value, m.bytes), change);
}

std::string plural(int n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

std::string render_diff(const DiffResult& r, bool colour) {
  const Painter paint{colour};
  const auto name = namer_for(r);
  const auto count = [](const auto& list) { return static_cast<int>(list.size()); };
  std::string out;

  // "triton 3.8.0 -> 3.9.0 on 81 cells", "cuda:90 -> hip:gfx942 on 27 cells"
  out += paint(fmt::format("{} -> {} on {}", side_name(r, true), r.selection.b,
                           plural(r.compared, "cell")),
               kBold) +
         "\n";
  const auto counted = [&](const char* label, int n, const char* code) {
    const auto text = fmt::format("{} {}", label, n);
    return n > 0 && code != nullptr ? paint(text, code) : text;
  };
  out += util::join({counted("regressed", count(r.regressed), kRed),
                     counted("fixed", count(r.fixed), kGreen),
                     counted("fail differently", count(r.fail_differently), kYellow),
                     counted("unchanged", r.unchanged, nullptr),
                     counted("slower to compile", count(r.slower), kYellow)},
                    " · ") +
         "\n";
  std::vector<std::string> also;
  if (!r.changed.empty())
    also.push_back(fmt::format("{} with size or metadata changes", count(r.changed)));
  if (!r.only_in_old.empty())
    also.push_back(fmt::format("{} only in {}", count(r.only_in_old), side_name(r, true)));
  if (!r.only_in_new.empty())
    also.push_back(fmt::format("{} only in {}", count(r.only_in_new), side_name(r, false)));
  if (!r.not_compared.empty())
    also.push_back(fmt::format("{} not compared (unchecked)", count(r.not_compared)));
  if (!also.empty()) out += paint(util::join(also, " · "), kDim) + "\n";

  const auto section = [&](const std::string& title, const char* code) {
    out += "\n" + paint(title, code) + "\n";
  };
  const auto detail = [&](const std::string& prefix, const std::string& message) {
    if (!message.empty()) out += fmt::format("      {}{}\n", prefix, message);
  };

  if (!r.regressed.empty()) {
    section("regressed", kRed);
    for (const auto& c : r.regressed) {
      out += fmt::format("  {}: {} -> {}\n", name(c), outcome(*c.old_cell), outcome(*c.new_cell));
      detail("", message_of(*c.new_cell));
    }
  }
  if (!r.fixed.empty()) {
    section("fixed", kGreen);
    for (const auto& c : r.fixed) {
      out += fmt::format("  {}: {} -> {}\n", name(c), outcome(*c.old_cell), outcome(*c.new_cell));
      detail("was: ", message_of(*c.old_cell));
    }
  }
  if (!r.fail_differently.empty()) {
    section("fail differently", kYellow);
    for (const auto& c : r.fail_differently) {
      out += fmt::format("  {}: {} -> {}\n", name(c), outcome(*c.old_cell), outcome(*c.new_cell));
      detail("old: ", message_of(*c.old_cell));
      detail("new: ", message_of(*c.new_cell));
    }
  }
  if (!r.changed.empty()) {
    section(
        fmt::format("size and metadata changes ({:g}% or more)", r.options.size_threshold * 100),
        kBold);
    for (const auto& c : r.changed) {
      std::vector<std::string> parts;
      for (const auto& m : c.metrics) parts.push_back(format_metric(m));
      out += fmt::format("  {}: {}\n", name(c), util::join(parts, " · "));
    }
  }
  if (!r.slower.empty()) {
    section(fmt::format("slower to compile ({:g}x and {:g} s or more)", r.options.time_ratio,
                        r.options.time_min_seconds),
            kYellow);
    for (const auto& c : r.slower)
      out += fmt::format("  {}: {:.2f} s -> {:.2f} s ({:.1f}x)\n", name(c), c.old_cell->compile_s,
                         c.new_cell->compile_s, c.new_cell->compile_s / c.old_cell->compile_s);
  }
  const auto only = [&](const std::vector<CellChange>& list, bool old_side) {
    if (list.empty()) return;
    section("only in " + side_name(r, old_side), kBold);
    for (const auto& c : list) out += fmt::format("  {}: {}\n", name(c), outcome(any_cell(c)));
  };
  only(r.only_in_old, true);
  only(r.only_in_new, false);
  out += "\n" + paint(std::string(kCompileOnlyDisclaimer), kDim) + "\n";
  return out;
}

// ---- JSON ---------------------------------------------------------------------------------------

namespace {

nlohmann::json optional_string(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

nlohmann::json cell_json(const std::optional<CellResult>& c) {
  if (!c) return nullptr;
  return {{"target", c->target},
          {"triton", c->triton},
          {"triton_version", c->triton_version},
          {"status", to_string(c->status)},
          {"kind", c->kind == FailureKind::none ? nlohmann::json(nullptr)
                                                : nlohmann::json(to_string(c->kind))},
          {"stage", optional_string(c->stage)},
          {"pass", optional_string(c->pass)},
          {"message", optional_string(c->message)},
          {"fingerprint", optional_string(c->fingerprint)},
          {"compile_s", c->compile_s}};
}

nlohmann::json number_json(double value) {
  if (value == std::floor(value) && std::abs(value) < 1e15) return static_cast<long long>(value);
  return value;
}

nlohmann::json change_json(const CellChange& c) {
  nlohmann::json j = {
      {"row", c.row}, {"old", cell_json(c.old_cell)}, {"new", cell_json(c.new_cell)}};
  if (!c.metrics.empty()) {
    auto& changes = j["changes"] = nlohmann::json::array();
    for (const auto& m : c.metrics)
      changes.push_back({{"metric", m.metric},
                         {"old", number_json(m.old_value)},
                         {"new", number_json(m.new_value)},
                         {"percent", m.percent ? nlohmann::json(*m.percent) : nullptr}});
  }
  return j;
}

nlohmann::json list_json(const std::vector<CellChange>& list) {
  auto out = nlohmann::json::array();
  for (const auto& c : list) out.push_back(change_json(c));
  return out;
}

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::versions:
      return "versions";
    case Mode::targets:
      return "targets";
    case Mode::runs:
      break;
  }
  return "runs";
}

}  // namespace

nlohmann::json diff_to_json(const DiffResult& r) {
  auto slower = list_json(r.slower);
  for (std::size_t i = 0; i < r.slower.size(); ++i)
    slower[i]["ratio"] = r.slower[i].new_cell->compile_s / r.slower[i].old_cell->compile_s;
  return {
      {"mode", mode_name(r.selection.mode)},
      {"old", r.selection.a},
      {"new", r.selection.b},
      {"thresholds",
       {{"time_ratio", r.options.time_ratio},
        {"time_min_seconds", r.options.time_min_seconds},
        {"size_threshold", r.options.size_threshold}}},
      {"counts",
       {{"compared", r.compared},
        {"regressed", r.regressed.size()},
        {"fixed", r.fixed.size()},
        {"fail_differently", r.fail_differently.size()},
        {"unchanged", r.unchanged},
        {"not_compared", r.not_compared.size()},
        {"slower", r.slower.size()},
        {"changed", r.changed.size()},
        {"only_in_old", r.only_in_old.size()},
        {"only_in_new", r.only_in_new.size()}}},
      {"regressed", list_json(r.regressed)},
      {"fixed", list_json(r.fixed)},
      {"fail_differently", list_json(r.fail_differently)},
      {"not_compared", list_json(r.not_compared)},
      {"slower", std::move(slower)},
      {"changed", list_json(r.changed)},
      {"only_in_old", list_json(r.only_in_old)},
      {"only_in_new", list_json(r.only_in_new)},
  };
}

// ---- exit code ----------------------------------------------------------------------------------

const std::vector<std::string>& fail_on_names() {
  static const std::vector<std::string> names = {
      "regressed", "fixed", "fail-differently", "slower", "changed", "only-in-old", "only-in-new"};
  return names;
}

int diff_exit_code(const DiffResult& r, const std::vector<std::string>& fail_on) {
  std::vector<std::string> names;
  for (const auto& entry : fail_on)
    for (const auto& part : util::split(entry, ',')) {
      const auto name = std::string(util::trim(part));
      if (name.empty()) continue;
      const auto& known = fail_on_names();
      if (std::find(known.begin(), known.end(), name) == known.end())
        throw UsageError(fmt::format("--fail-on: unknown category '{}' (one of: {})", name,
                                     util::join(known, ", ")));
      names.push_back(name);
    }
  const auto any = [&](const std::string& name) {
    if (name == "regressed") return !r.regressed.empty();
    if (name == "fixed") return !r.fixed.empty();
    if (name == "fail-differently") return !r.fail_differently.empty();
    if (name == "slower") return !r.slower.empty();
    if (name == "changed") return !r.changed.empty();
    if (name == "only-in-old") return !r.only_in_old.empty();
    return !r.only_in_new.empty();
  };
  return std::any_of(names.begin(), names.end(), any) ? exit_code::new_failures : exit_code::ok;
}

// ---- IR files -----------------------------------------------------------------------------------

const std::vector<std::string>& ir_stages() {
  static const std::vector<std::string> stages = {"ttir", "ttgir", "llir", "ptx", "amdgcn"};
  return stages;
}

std::optional<std::filesystem::path> saved_ir_dir(const Report& report) {
  const auto& env = report.environment;
  if (!env.is_object() || !env.contains("options") || !env["options"].is_object())
    return std::nullopt;
  const auto it = env["options"].find("save_ir");
  if (it == env["options"].end() || !it->is_string() || it->get<std::string>().empty())
    return std::nullopt;
  return std::filesystem::path(it->get<std::string>());
}

std::optional<std::filesystem::path> ir_file(const std::filesystem::path& dir,
                                             const CellResult& cell, std::string_view stage) {
  namespace fs = std::filesystem;
  const auto folder = dir / ir_target_folder(cell.triton) / ir_row_folder(cell.kernel) /
                      ir_target_folder(cell.target);
  const auto extension = "." + std::string(stage);
  std::error_code ec;
  if (cell.metadata.is_object() && cell.metadata.contains("name") &&
      cell.metadata["name"].is_string()) {
    auto file = folder / (cell.metadata["name"].get<std::string>() + extension);
    if (fs::is_regular_file(file, ec)) return file;
  }
  if (!fs::is_directory(folder, ec)) return std::nullopt;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file(ec) && entry.path().extension() == extension)
      found.push_back(entry.path());
  if (found.empty()) return std::nullopt;
  return *std::min_element(found.begin(), found.end());
}

std::string diff_cell_ir(const CellChange& change, const std::filesystem::path& old_dir,
                         const std::filesystem::path& new_dir, std::string_view stage,
                         int context) {
  if (!change.old_cell || !change.new_cell) return "";
  const auto a = ir_file(old_dir, *change.old_cell, stage);
  const auto b = ir_file(new_dir, *change.new_cell, stage);
  if (!a || !b) return "";
  return unified_diff(normalize_ir(util::read_file(*a)), normalize_ir(util::read_file(*b)),
                      util::relative_if_inside(*a, old_dir).string(),
                      util::relative_if_inside(*b, new_dir).string(), context);
}

std::string diff_cell_ir(const CellChange& change, const std::filesystem::path& old_dir,
                         const std::filesystem::path& new_dir, int context) {
  std::string out;
  for (const auto& stage : ir_stages())
    out += diff_cell_ir(change, old_dir, new_dir, stage, context);
  return out;
}

// ---- IR normalisation ---------------------------------------------------------------------------

namespace {

bool ident_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
         ch == '_' || ch == '.' || ch == '$';
}
bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
bool is_alpha(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }
bool is_hex(char ch) {
  return is_digit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}
bool is_alnum(char ch) { return is_digit(ch) || is_alpha(ch); }

// Lines that only say where something came from.
bool location_only(std::string_view line) {
  const auto t = util::trim(line);
  if (t.starts_with("#loc") && t.find(" = loc(") != std::string_view::npos) return true;
  if (t.starts_with(".loc") && t.size() > 4 && (t[4] == ' ' || t[4] == '\t')) return true;
  if (t.starts_with("!") && t.find("= !DILocation(") != std::string_view::npos) return true;
  return false;
}

// Removes " loc(...)" (balanced, strings respected) and ", !dbg !N".
std::string strip_locations(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  std::size_t i = 0;
  while (i < line.size()) {
    if (line.compare(i, 4, "loc(") == 0 && (i == 0 || !ident_char(line[i - 1])) &&
        (i == 0 || line[i - 1] != '#')) {
      std::size_t j = i + 4;
      int depth = 1;
      bool quoted = false;
      for (; j < line.size() && depth > 0; ++j) {
        const char ch = line[j];
        if (quoted) {
          if (ch == '\\')
            ++j;
          else if (ch == '"')
            quoted = false;
        } else if (ch == '"') {
          quoted = true;
        } else if (ch == '(') {
          ++depth;
        } else if (ch == ')') {
          --depth;
        }
      }
      if (depth == 0) {
        while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
        i = j;
        continue;
      }
    }
    if (line.compare(i, 8, ", !dbg !") == 0) {
      std::size_t j = i + 8;
      while (j < line.size() && is_digit(line[j])) ++j;
      if (j > i + 8) {
        i = j;
        continue;
      }
    }
    out += line[i++];
  }
  return out;
}

std::string normalize_paths(const std::string& line) {
  if (line.find('/') == std::string::npos) return line;
  static const std::regex absolute(R"((?:/[^\s/:'"`,;()<>\[\]{}]+)+/([^\s/:'"`,;()<>\[\]{}]+))");
  static const std::regex temp(R"(<path>/tmp[A-Za-z0-9_]{4,}(\.\w+)?)");
  return std::regex_replace(std::regex_replace(line, absolute, "<path>/$1"), temp, "<tmpfile>");
}

// %12, %arg3, %r12 (PTX) -> N; MLIR's uniquing suffix goes (%cst_0 -> %cst, %c0_i32_7 -> %N_i32);
// %tid.x and %cst stay.
std::string normalize_ssa_name(std::string_view name) {
  std::string_view rest = name;
  if (const auto underscore = rest.rfind('_');
      underscore != std::string_view::npos && underscore > 0 && underscore + 1 < rest.size() &&
      is_alpha(rest[0]) &&
      std::all_of(rest.begin() + underscore + 1, rest.end(), [](char ch) { return is_digit(ch); }))
    rest = rest.substr(0, underscore);
  std::size_t j = 0;
  while (j < rest.size() && (is_alpha(rest[j]) || rest[j] == '_')) ++j;
  std::size_t k = j;
  while (k < rest.size() && is_digit(rest[k])) ++k;
  if (k > j && (k == rest.size() || rest[k] == '_' || rest[k] == '.'))
    return "N" + std::string(rest.substr(k));
  return std::string(rest);
}

std::string normalize_tokens(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  std::size_t i = 0;
  // An LLVM numbered block label: "12:".
  {
    std::size_t j = 0;
    while (j < line.size() && is_digit(line[j])) ++j;
    if (j > 0 && j < line.size() && line[j] == ':') {
      out += "N:";
      i = j + 1;
    }
  }
  while (i < line.size()) {
    const char ch = line[i];
    const bool boundary = i == 0 || !ident_char(line[i - 1]);
    if (ch == '%') {
      std::size_t j = i + 1;
      while (j < line.size() && ident_char(line[j])) ++j;
      out += '%';
      out += normalize_ssa_name(line.substr(i + 1, j - i - 1));
      i = j;
      if (out.ends_with("%N") && i + 1 < line.size() && line[i] == '#' && is_digit(line[i + 1])) {
        ++i;  // %0#1: a result of a multi-result op
        while (i < line.size() && is_digit(line[i])) ++i;
      }
      continue;
    }
    if (boundary && line.compare(i, 4, "#loc") == 0) {
      std::size_t j = i + 4;
      while (j < line.size() && is_digit(line[j])) ++j;
      out += "#loc";
      i = j;
      continue;
    }
    if (line.compare(i, 3, "^bb") == 0 && i + 3 < line.size() && is_digit(line[i + 3])) {
      std::size_t j = i + 3;
      while (j < line.size() && is_digit(line[j])) ++j;
      out += "^bbN";
      i = j;
      continue;
    }
    for (const std::string_view label : {std::string_view("$L__BB"), std::string_view(".LBB")}) {
      if (line.compare(i, label.size(), label) == 0 && i + label.size() < line.size() &&
          is_digit(line[i + label.size()])) {
        std::size_t j = i + label.size();
        while (j < line.size() && (is_digit(line[j]) || line[j] == '_')) ++j;
        out += label;
        out += 'N';
        i = j;
        goto next;
      }
    }
    if (ch == '0' && i + 1 < line.size() && (line[i + 1] == 'x' || line[i + 1] == 'X') &&
        (i == 0 || !is_alnum(line[i - 1]))) {
      std::size_t j = i + 2;
      while (j < line.size() && is_hex(line[j])) ++j;
      const auto digits = j - i - 2;
      if ((j == line.size() || !is_alnum(line[j])) &&
          ((digits >= 9 && digits <= 12) || digits > 16)) {
        out += "0x?";
        i = j;
        continue;
      }
      out.append(line.substr(i, j - i));
      i = j;
      continue;
    }
    if (is_hex(ch) && (i == 0 || !is_alnum(line[i - 1]))) {
      std::size_t j = i;
      while (j < line.size() && is_hex(line[j])) ++j;
      if (j - i >= 32 && (j == line.size() || !is_alnum(line[j]))) {
        out += "<hash>";
        i = j;
        continue;
      }
      if (is_alnum(ch)) {  // copy the whole word, so a hash cannot start inside it
        while (j < line.size() && is_alnum(line[j])) ++j;
        out.append(line.substr(i, j - i));
        i = j;
        continue;
      }
    }
    out += ch;
    ++i;
  next:;
  }
  return out;
}

}  // namespace

std::string normalize_ir(std::string_view ir) {
  std::string out;
  out.reserve(ir.size());
  std::size_t pos = 0;
  while (pos < ir.size()) {
    auto end = ir.find('\n', pos);
    if (end == std::string_view::npos) end = ir.size();
    auto line = ir.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (location_only(line)) continue;
    auto normal = normalize_tokens(normalize_paths(strip_locations(line)));
    while (!normal.empty() && (normal.back() == ' ' || normal.back() == '\t')) normal.pop_back();
    out += normal;
    out += '\n';
  }
  return out;
}

// ---- unified diff -------------------------------------------------------------------------------

namespace {

struct Text {
  std::vector<std::string_view> lines;
  bool last_newline = true;  // whether the last line ends with '\n'
};

Text split_text(std::string_view s) {
  Text t;
  std::size_t pos = 0;
  while (pos < s.size()) {
    auto end = s.find('\n', pos);
    if (end == std::string_view::npos) {
      t.lines.push_back(s.substr(pos));
      t.last_newline = false;
      break;
    }
    t.lines.push_back(s.substr(pos, end - pos));
    pos = end + 1;
  }
  return t;
}

// Myers' O(ND) difference in linear space (the bisection of diff-match-patch), on line ids.
// Marks the lines of the longest common subsequence it finds.
class LineDiff {
 public:
  LineDiff(const std::vector<int>& a, const std::vector<int>& b)
      : a_(a), b_(b), a_kept_(a.size(), 0), b_kept_(b.size(), 0) {
    run(0, static_cast<int>(a.size()), 0, static_cast<int>(b.size()));
  }
  [[nodiscard]] const std::vector<char>& a_kept() const { return a_kept_; }
  [[nodiscard]] const std::vector<char>& b_kept() const { return b_kept_; }

 private:
  void run(int a0, int a1, int b0, int b1) {
    while (a0 < a1 && b0 < b1 && a_[a0] == b_[b0]) keep(a0++, b0++);
    while (a0 < a1 && b0 < b1 && a_[a1 - 1] == b_[b1 - 1]) keep(--a1, --b1);
    if (a0 == a1 || b0 == b1) return;
    const auto split = bisect(a0, a1, b0, b1);
    if (!split) return;  // nothing in common
    run(a0, split->first, b0, split->second);
    run(split->first, a1, split->second, b1);
  }

  void keep(int i, int j) {
    a_kept_[i] = 1;
    b_kept_[j] = 1;
  }

  std::optional<std::pair<int, int>> bisect(int a0, int a1, int b0, int b1) {
    const int n = a1 - a0, m = b1 - b0;
    const int max_d = (n + m + 1) / 2;
    const int offset = max_d + 1;
    const auto length = static_cast<std::size_t>(2 * max_d + 3);
    v1_.assign(length, -1);
    v2_.assign(length, -1);
    v1_[offset + 1] = 0;
    v2_[offset + 1] = 0;
    const int delta = n - m;
    const bool front = (delta % 2) != 0;
    int k1start = 0, k1end = 0, k2start = 0, k2end = 0;
    for (int d = 0; d < max_d; ++d) {
      for (int k1 = -d + k1start; k1 <= d - k1end; k1 += 2) {
        const int i1 = offset + k1;
        int x1 =
            (k1 == -d || (k1 != d && v1_[i1 - 1] < v1_[i1 + 1])) ? v1_[i1 + 1] : v1_[i1 - 1] + 1;
        int y1 = x1 - k1;
        while (x1 < n && y1 < m && a_[a0 + x1] == b_[b0 + y1]) ++x1, ++y1;
        v1_[i1] = x1;
        if (x1 > n) {
          k1end += 2;
        } else if (y1 > m) {
          k1start += 2;
        } else if (front) {
          const int i2 = offset + delta - k1;
          if (i2 >= 0 && i2 < static_cast<int>(length) && v2_[i2] != -1 && x1 >= n - v2_[i2])
            return std::pair{a0 + x1, b0 + y1};
        }
      }
      for (int k2 = -d + k2start; k2 <= d - k2end; k2 += 2) {
        const int i2 = offset + k2;
        int x2 =
            (k2 == -d || (k2 != d && v2_[i2 - 1] < v2_[i2 + 1])) ? v2_[i2 + 1] : v2_[i2 - 1] + 1;
        int y2 = x2 - k2;
        while (x2 < n && y2 < m && a_[a1 - 1 - x2] == b_[b1 - 1 - y2]) ++x2, ++y2;
        v2_[i2] = x2;
        if (x2 > n) {
          k2end += 2;
        } else if (y2 > m) {
          k2start += 2;
        } else if (!front) {
          const int i1 = offset + delta - k2;
          if (i1 >= 0 && i1 < static_cast<int>(length) && v1_[i1] != -1) {
            const int x1 = v1_[i1];
            const int y1 = offset + x1 - i1;
            if (x1 >= n - x2) return std::pair{a0 + x1, b0 + y1};
          }
        }
      }
    }
    return std::nullopt;
  }

  const std::vector<int>& a_;
  const std::vector<int>& b_;
  std::vector<char> a_kept_, b_kept_;
  std::vector<int> v1_, v2_;
};

struct Op {
  char type;  // ' ', '-', '+'
  int a;      // old lines before this one
  int b;      // new lines before this one
};

std::string hunk_range(int before, int count) {
  const int start = count == 0 ? before : before + 1;
  return count == 1 ? fmt::format("{}", start) : fmt::format("{},{}", start, count);
}

}  // namespace

std::string unified_diff(std::string_view a, std::string_view b, const std::string& a_name,
                         const std::string& b_name, int context) {
  if (a == b) return "";
  context = std::max(context, 0);
  const auto ta = split_text(a), tb = split_text(b);

  // Line ids; the last line without a newline differs from the same text with one.
  std::unordered_map<std::string_view, int> ids;
  const auto to_ids = [&ids](const Text& t) {
    std::vector<int> out;
    out.reserve(t.lines.size());
    for (std::size_t i = 0; i < t.lines.size(); ++i) {
      const int id = ids.emplace(t.lines[i], static_cast<int>(ids.size())).first->second;
      const bool unterminated = i + 1 == t.lines.size() && !t.last_newline;
      out.push_back(id * 2 + (unterminated ? 1 : 0));
    }
    return out;
  };
  const auto ia = to_ids(ta), ib = to_ids(tb);
  const LineDiff lcs(ia, ib);
  const auto& a_kept = lcs.a_kept();
  const auto& b_kept = lcs.b_kept();

  std::vector<Op> ops;
  ops.reserve(ia.size() + ib.size());
  for (int i = 0, j = 0, n = static_cast<int>(ia.size()), m = static_cast<int>(ib.size());
       i < n || j < m;) {
    if (i < n && !a_kept[i]) {
      ops.push_back({'-', i, j});
      ++i;
    } else if (j < m && !b_kept[j]) {
      ops.push_back({'+', i, j});
      ++j;
    } else {
      ops.push_back({' ', i, j});
      ++i, ++j;
    }
  }

  const auto line_of = [&](const Op& op) {
    const bool old_side = op.type != '+';
    const auto& t = old_side ? ta : tb;
    const auto index = static_cast<std::size_t>(old_side ? op.a : op.b);
    std::string s(1, op.type);
    s.append(t.lines[index]);
    s += '\n';
    if (index + 1 == t.lines.size() && !t.last_newline) s += "\\ No newline at end of file\n";
    return s;
  };

  std::string out;
  const auto total = static_cast<std::ptrdiff_t>(ops.size());
  std::ptrdiff_t i = 0;
  while (i < total) {
    std::ptrdiff_t c = i;
    while (c < total && ops[c].type == ' ') ++c;
    if (c == total) break;
    const std::ptrdiff_t start = std::max(i, c - context);
    std::ptrdiff_t last = c;
    // Changes with at most 2 * context equal lines between them share a hunk.
    for (std::ptrdiff_t k = c + 1; k < total; ++k) {
      if (ops[k].type != ' ')
        last = k;
      else if (k - last > 2 * context)
        break;
    }
    const std::ptrdiff_t end = std::min(total, last + context + 1);
    int old_count = 0, new_count = 0;
    for (std::ptrdiff_t k = start; k < end; ++k) {
      if (ops[k].type != '+') ++old_count;
      if (ops[k].type != '-') ++new_count;
    }
    if (out.empty()) out = fmt::format("--- {}\n+++ {}\n", a_name, b_name);
    out += fmt::format("@@ -{} +{} @@\n", hunk_range(ops[start].a, old_count),
                       hunk_range(ops[start].b, new_count));
    for (std::ptrdiff_t k = start; k < end; ++k) out += line_of(ops[k]);
    i = end;
  }
  return out;
}

}  // namespace portcheck
