#include "src/versions/diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "src/core/errors.hpp"
#include "util/strings.hpp"

namespace portcheck {
namespace {

using Mode = DiffSelection::Mode;

// A config the autotuner skips passes as far as its launch goes (configs_remaining tells more).
bool passing(const CellResult& c) {
  return c.status == Status::ok || c.status == Status::xpass || c.status == Status::skipped;
}

// Files a pair whose autotuned launch keeps another number of configs, once per launch.
void file_configs_remaining(DiffResult& result, const CellChange& pair) {
  const auto& o = *pair.old_cell;
  const auto& n = *pair.new_cell;
  if (!o.autotuned || !n.autotuned || o.autotuned->remaining == n.autotuned->remaining) return;
  const auto same_launch = [&](const CellChange& c) {
    return c.new_cell->base_kernel == n.base_kernel && c.new_cell->target == n.target &&
           c.new_cell->triton == n.triton && c.new_cell->autotuned->name == n.autotuned->name;
  };
  if (std::none_of(result.configs_remaining.begin(), result.configs_remaining.end(), same_launch))
    result.configs_remaining.push_back(pair);
}

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

// How two runs' cells pair (Mode::runs), by what their Tritons share.
enum class RunPairing {
  label,    // the runs share a Triton label (two plain runs: "current" both, whatever version)
  version,  // no label in common, a version in common ("--triton 3.6.0" against a 3.6.0 current)
  across,   // neither, and each run holds one Triton: an upgrade's before and after
};

// The Triton of a cell as another run can share it: its version when known, else its label.
std::string version_of(const CellResult& c) {
  return c.triton_version.empty() ? c.triton : c.triton_version;
}

std::set<std::string> tritons_of(const std::vector<const CellResult*>& cells, bool versions) {
  std::set<std::string> out;
  for (const auto* c : cells) out.insert(versions ? version_of(*c) : c->triton);
  return out;
}

bool share_one(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&b](const std::string& x) { return b.contains(x); });
}

// Throws when the runs hold several Tritons each and none in common: nothing could pair, and
// "0 cells compared" must not read as "nothing changed" (--fail-on would pass).
RunPairing runs_pairing(const std::vector<const CellResult*>& olds,
                        const std::vector<const CellResult*>& news,
                        const DiffSelection& selection) {
  if (olds.empty() || news.empty() || share_one(tritons_of(olds, false), tritons_of(news, false)))
    return RunPairing::label;
  const auto old_versions = tritons_of(olds, true);
  const auto new_versions = tritons_of(news, true);
  if (share_one(old_versions, new_versions)) return RunPairing::version;
  if (old_versions.size() == 1 && new_versions.size() == 1) return RunPairing::across;
  throw UsageError(fmt::format(
      "diff: {} and {} share no Triton release ({} holds {}; {} holds {}), so no cell pairs with "
      "another: diff runs of a common release, or one report holding both with --versions",
      selection.a, selection.b, selection.a,
      util::join({old_versions.begin(), old_versions.end()}, ", "), selection.b,
      util::join({new_versions.begin(), new_versions.end()}, ", ")));
}

// Runs paired by a label they share ("current" in both) that were made with different releases:
// said, so that what the release changed is not read as what the kernels' code changed. Empty
// when every shared label names the same release on both sides.
std::string shared_label_note(const std::vector<const CellResult*>& olds,
                              const std::vector<const CellResult*>& news,
                              const DiffSelection& selection) {
  using Versions = std::map<std::string, std::set<std::string>>;  // label -> versions
  const auto versions_of = [](const std::vector<const CellResult*>& cells) {
    Versions out;
    for (const auto* c : cells)
      if (!c->triton_version.empty()) out[c->triton].insert(c->triton_version);
    return out;
  };
  const auto old_versions = versions_of(olds);
  const auto new_versions = versions_of(news);
  std::vector<std::string> notes;
  for (const auto& [label, before] : old_versions) {
    const auto after = new_versions.find(label);
    if (after == new_versions.end() || after->second == before) continue;
    notes.push_back(
        fmt::format("triton '{}' is {} in {} but {} in {}: a change may be the release's", label,
                    util::join({before.begin(), before.end()}, ", "), selection.a,
                    util::join({after->second.begin(), after->second.end()}, ", "), selection.b));
  }
  return util::join(notes, " · ");
}

std::string match_key(const CellResult& c, Mode mode, RunPairing pairing) {
  switch (mode) {
    case Mode::versions:
      return c.kernel + '\x1f' + c.target;
    case Mode::targets:
      return c.kernel + '\x1f' + c.triton;
    case Mode::runs:
      break;
  }
  auto base = c.kernel + '\x1f' + c.target;
  if (pairing == RunPairing::across) return base;
  return base + '\x1f' + (pairing == RunPairing::version ? version_of(c) : c.triton);
}

// ---- metrics ------------------------------------------------------------------------------------

struct MetricSpec {
  const char* field;  // sizes, resources, metadata
  const char* key;
  const char* label;
  bool bytes;
  // Registers and spills, from the assembler's own count (the cubin's, the code object's): one
  // more or less changes occupancy, so any change is shown, whatever --size-threshold says.
  bool registers;
};

constexpr MetricSpec kMetrics[] = {
    {"sizes", "cubin", "cubin", true, false},
    {"sizes", "ptx", "ptx", true, false},
    {"sizes", "llir", "llir", true, false},
    {"sizes", "hsaco", "hsaco", true, false},
    {"sizes", "amdgcn", "amdgcn", true, false},
    {"resources", "registers", "registers", false, true},
    {"resources", "local_bytes", "spills", true, true},
    {"resources", "vgprs", "vgprs", false, true},
    {"resources", "sgprs", "sgprs", false, true},
    {"resources", "vgpr_spills", "vgpr spills", false, true},
    {"resources", "sgpr_spills", "sgpr spills", false, true},
    {"metadata", "shared", "shared", true, false},
    {"metadata", "num_stages", "num_stages", false, false},
};

// The report's object of that name; `metadata`: the cell's, as the report writes it.
const nlohmann::json& field_of(const CellResult& c, const nlohmann::json& metadata,
                               std::string_view field) {
  if (field == "sizes") return c.sizes;
  if (field == "resources") return c.resources;
  return metadata;
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
  const auto o_metadata = to_json(o.metadata);
  const auto n_metadata = to_json(n.metadata);
  for (const auto& spec : kMetrics) {
    const auto before = number_at(field_of(o, o_metadata, spec.field), spec.key);
    const auto after = number_at(field_of(n, n_metadata, spec.field), spec.key);
    if (!before || !after || *before == *after) continue;
    MetricChange m{fmt::format("{}.{}", spec.field, spec.key),
                   spec.label,
                   spec.bytes,
                   *before,
                   *after,
                   std::nullopt,
                   spec.registers};
    if (*before != 0) {
      const double relative = (*after - *before) / std::abs(*before);
      if (!spec.registers && std::abs(relative) + kEpsilon < options.size_threshold) continue;
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

struct SelectedCells {
  std::vector<const CellResult*> olds, news;
};

SelectedCells selected_cells(const Report& old_report, const Report& new_report,
                             const DiffSelection& selection) {
  SelectedCells cells;
  switch (selection.mode) {
    case Mode::versions:
      if (selection.a == selection.b)
        throw UsageError(fmt::format("diff: compare two different Triton versions, not '{}' twice",
                                     selection.a));
      cells.olds = cells_of_triton(old_report, selection.a);
      cells.news = cells_of_triton(new_report, selection.b);
      break;
    case Mode::targets:
      if (selection.a == selection.b)
        throw UsageError(
            fmt::format("diff: compare two different targets, not '{}' twice", selection.a));
      cells.olds = cells_of_target(old_report, selection.a);
      cells.news = cells_of_target(new_report, selection.b);
      break;
    case Mode::runs:
      for (const auto& c : old_report.cells) cells.olds.push_back(&c);
      for (const auto& c : new_report.cells) cells.news.push_back(&c);
      break;
  }
  return cells;
}

// A passing pair's metric changes: registers and spills in one list, sizes and metadata in the
// other (a pair may be in both, each with its own metrics).
void file_metrics(DiffResult& result, const CellChange& pair, std::vector<MetricChange> metrics) {
  CellChange registers = pair, sizes = pair;
  for (auto& m : metrics) (m.registers ? registers : sizes).metrics.push_back(std::move(m));
  if (!registers.metrics.empty()) result.registers.push_back(std::move(registers));
  if (!sizes.metrics.empty()) result.changed.push_back(std::move(sizes));
}

// Files a matched pair under the one outcome category it belongs to (or counts it unchanged);
// a passing pair may also be slower or changed in size.
void file_pair(DiffResult& result, const CellResult& o, const CellResult& n) {
  CellChange change{o.kernel, o, n, {}};
  file_configs_remaining(result, change);
  if (o.status == Status::unchecked || n.status == Status::unchecked) {
    result.not_compared.push_back(std::move(change));
  } else if (passing(o) && n.failed_outcome()) {
    result.regressed.push_back(std::move(change));
  } else if (o.failed_outcome() && passing(n)) {
    result.fixed.push_back(std::move(change));
  } else if (o.failed_outcome() && n.failed_outcome()) {
    if (failure_identity(o) == failure_identity(n))
      ++result.unchanged;
    else
      result.fail_differently.push_back(std::move(change));
  } else {
    ++result.unchanged;
    if (o.compile_s > 0 && n.compile_s > 0) {
      ++result.compile_time.cells;
      result.compile_time.old_s += o.compile_s;
      result.compile_time.new_s += n.compile_s;
    }
    if (slower_to_compile(o, n, result.options)) result.slower.push_back(change);
    file_metrics(result, change, metric_changes(o, n, result.options));
  }
}

}  // namespace

DiffResult diff_reports(const Report& old_report, const Report& new_report,
                        const DiffSelection& selection, const DiffOptions& options) {
  DiffResult result;
  result.selection = selection;
  result.options = options;
  const auto [olds, news] = selected_cells(old_report, new_report, selection);
  const auto pairing =
      selection.mode == Mode::runs ? runs_pairing(olds, news, selection) : RunPairing::label;
  if (pairing == RunPairing::version)
    result.pairing_note = "paired by Triton version: the runs' labels differ";
  else if (pairing == RunPairing::across)
    result.pairing_note = fmt::format("compared across Triton releases: {} -> {}",
                                      version_of(*olds.front()), version_of(*news.front()));
  else if (selection.mode == Mode::runs)
    result.pairing_note = shared_label_note(olds, news, selection);

  std::unordered_map<std::string, std::size_t> new_index;
  for (std::size_t i = 0; i < news.size(); ++i)
    new_index.emplace(match_key(*news[i], selection.mode, pairing), i);
  std::vector<bool> used(news.size(), false);
  for (const auto* o : olds) {
    const auto it = new_index.find(match_key(*o, selection.mode, pairing));
    if (it == new_index.end() || used[it->second]) {
      result.only_in_old.push_back({o->kernel, *o, std::nullopt, {}});
      continue;
    }
    used[it->second] = true;
    ++result.compared;
    file_pair(result, *o, *news[it->second]);
  }
  for (std::size_t i = 0; i < news.size(); ++i)
    if (!used[i]) result.only_in_new.push_back({news[i]->kernel, std::nullopt, *news[i], {}});

  std::set<std::string> tritons;
  for (const auto* list : {&olds, &news})
    for (const auto* c : *list) tritons.insert(c->triton);
  // Across two releases, each side is one Triton: the header names both, the cells need not.
  result.several_tritons = tritons.size() > 1 && pairing != RunPairing::across;
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
  // Registers and spills by how many more or fewer: 1 of 32 is what decides occupancy, not 3%.
  const double delta = m.new_value - m.old_value;
  const auto change = m.registers ? (delta < 0 ? "-" : "+") + format_value(std::abs(delta), m.bytes)
                      : m.percent ? fmt::format("{:+.1f}%", *m.percent)
                                  : std::string("new");
  return fmt::format("{} {} -> {} ({})", m.label, format_value(m.old_value, m.bytes),
                     format_value(m.new_value, m.bytes), change);
}

std::string plural(int n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// One line per message a pair of a failure section shows: the new side's, the old side's, or
// both, each after its prefix.
struct MessageLine {
  const char* prefix;
  bool old_side;
};

// The sections of pairs whose outcome changed, in the order they are shown.
struct FailureSection {
  std::vector<CellChange> DiffResult::*list;
  const char* title;
  const char* colour;
  std::vector<MessageLine> messages;
};

const std::vector<FailureSection>& failure_sections() {
  static const std::vector<FailureSection> sections = {
      {&DiffResult::regressed, "regressed", kRed, {{"", false}}},
      {&DiffResult::fixed, "fixed", kGreen, {{"was: ", true}}},
      {&DiffResult::fail_differently,
       "fail differently",
       kYellow,
       {{"old: ", true}, {"new: ", false}}},
  };
  return sections;
}

// The terminal text of a diff: a header, then a section per non-empty category.
class DiffWriter {
 public:
  DiffWriter(const DiffResult& r, bool colour) : r_(r), paint_{colour}, name_(namer_for(r)) {}

  std::string text() {
    header();
    for (const auto& s : failure_sections()) failures(s);
    metrics(r_.registers, "register and spill changes");
    metrics(r_.changed, fmt::format("size and metadata changes ({:g}% or more)",
                                    r_.options.size_threshold * 100));
    slower();
    configs_remaining();
    only(r_.only_in_old, true);
    only(r_.only_in_new, false);
    out_ += "\n" + paint_(std::string(kCompileOnlyDisclaimer), kDim) + "\n";
    return out_;
  }

 private:
  static int count(const std::vector<CellChange>& list) { return static_cast<int>(list.size()); }

  // "triton 3.8.0 -> 3.9.0 on 81 cells", "cuda:90 -> hip:gfx942 on 27 cells", the counts line,
  // and a dim line of what else the diff holds.
  void header() {
    out_ += paint_(fmt::format("{} -> {} on {}", side_name(r_, true), r_.selection.b,
                               plural(r_.compared, "cell")),
                   kBold) +
            "\n";
    const auto counted = [&](const char* label, int n, const char* code) {
      const auto text = fmt::format("{} {}", label, n);
      return n > 0 && code != nullptr ? paint_(text, code) : text;
    };
    out_ += util::join({counted("regressed", count(r_.regressed), kRed),
                        counted("fixed", count(r_.fixed), kGreen),
                        counted("fail differently", count(r_.fail_differently), kYellow),
                        counted("unchanged", r_.unchanged, nullptr),
                        counted("slower to compile", count(r_.slower), kYellow)},
                       " · ") +
            "\n";
    if (const auto& t = r_.compile_time; t.cells > 0 && t.old_s > 0)
      out_ += fmt::format(
          "compile time {:.2f} s -> {:.2f} s ({:.2f}x) over the {} that compiled on "
          "both sides\n",
          t.old_s, t.new_s, t.new_s / t.old_s, plural(t.cells, "cell"));
    std::vector<std::string> also;
    if (!r_.registers.empty())
      also.push_back(fmt::format("{} with register or spill changes", count(r_.registers)));
    if (!r_.changed.empty())
      also.push_back(fmt::format("{} with size or metadata changes", count(r_.changed)));
    if (!r_.configs_remaining.empty())
      also.push_back(fmt::format("{} autotuned launches with other configs remaining",
                                 count(r_.configs_remaining)));
    if (!r_.only_in_old.empty())
      also.push_back(fmt::format("{} only in {}", count(r_.only_in_old), side_name(r_, true)));
    if (!r_.only_in_new.empty())
      also.push_back(fmt::format("{} only in {}", count(r_.only_in_new), side_name(r_, false)));
    if (!r_.not_compared.empty())
      also.push_back(fmt::format("{} not compared (unchecked)", count(r_.not_compared)));
    if (!r_.pairing_note.empty()) also.push_back(r_.pairing_note);
    if (!also.empty()) out_ += paint_(util::join(also, " · "), kDim) + "\n";
  }

  void section(const std::string& title, const char* code) {
    out_ += "\n" + paint_(title, code) + "\n";
  }

  void failures(const FailureSection& s) {
    const auto& list = r_.*s.list;
    if (list.empty()) return;
    section(s.title, s.colour);
    for (const auto& c : list) {
      out_ += fmt::format("  {}: {} -> {}\n", name_(c), outcome(*c.old_cell), outcome(*c.new_cell));
      for (const auto& m : s.messages) {
        const auto message = message_of(m.old_side ? *c.old_cell : *c.new_cell);
        if (!message.empty()) out_ += fmt::format("      {}{}\n", m.prefix, message);
      }
    }
  }

  void metrics(const std::vector<CellChange>& list, const std::string& title) {
    if (list.empty()) return;
    section(title, kBold);
    for (const auto& c : list) {
      std::vector<std::string> parts;
      for (const auto& m : c.metrics) parts.push_back(format_metric(m));
      out_ += fmt::format("  {}: {}\n", name_(c), util::join(parts, " · "));
    }
  }

  void slower() {
    if (r_.slower.empty()) return;
    section(fmt::format("slower to compile ({:g}x and {:g} s or more)", r_.options.time_ratio,
                        r_.options.time_min_seconds),
            kYellow);
    for (const auto& c : r_.slower)
      out_ += fmt::format("  {}: {:.2f} s -> {:.2f} s ({:.1f}x)\n", name_(c), c.old_cell->compile_s,
                          c.new_cell->compile_s, c.new_cell->compile_s / c.old_cell->compile_s);
  }

  void configs_remaining() {
    if (r_.configs_remaining.empty()) return;
    section("autotuned launches whose configs remaining changed", kYellow);
    for (const auto& c : r_.configs_remaining) {
      const auto& o = *c.old_cell->autotuned;
      const auto& n = *c.new_cell->autotuned;
      const char* note = n.remaining == 1   ? " (down to one)"
                         : n.remaining == 0 ? " (none: it fails)"
                                            : "";
      out_ += fmt::format("  {}: launch {}: {} -> {} of {} configs remain{}\n", name_(c), n.name,
                          o.remaining, n.remaining, n.configs, note);
    }
  }

  void only(const std::vector<CellChange>& list, bool old_side) {
    if (list.empty()) return;
    section("only in " + side_name(r_, old_side), kBold);
    for (const auto& c : list) out_ += fmt::format("  {}: {}\n", name_(c), outcome(any_cell(c)));
  }

  const DiffResult& r_;
  Painter paint_;
  Namer name_;
  std::string out_;
};

}  // namespace

std::string render_diff(const DiffResult& r, bool colour) { return DiffWriter(r, colour).text(); }

// ---- exit code ----------------------------------------------------------------------------------

namespace {

// --fail-on's categories, in the order --help names them.
struct FailOn {
  const char* name;
  std::vector<CellChange> DiffResult::*list;
};

constexpr FailOn kFailOn[] = {
    {"regressed", &DiffResult::regressed},
    {"fixed", &DiffResult::fixed},
    {"fail-differently", &DiffResult::fail_differently},
    {"slower", &DiffResult::slower},
    {"registers", &DiffResult::registers},
    {"changed", &DiffResult::changed},
    {"configs-remaining", &DiffResult::configs_remaining},
    {"only-in-old", &DiffResult::only_in_old},
    {"only-in-new", &DiffResult::only_in_new},
};

}  // namespace

const std::vector<std::string>& fail_on_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : kFailOn) out.emplace_back(f.name);
    return out;
  }();
  return names;
}

int diff_exit_code(const DiffResult& r, const std::vector<std::string>& fail_on) {
  std::vector<const FailOn*> named;
  for (const auto& entry : fail_on)
    for (const auto& part : util::split(entry, ',')) {
      const auto name = util::trim(part);
      if (name.empty()) continue;
      const auto* it = std::find_if(std::begin(kFailOn), std::end(kFailOn),
                                    [&](const FailOn& f) { return f.name == name; });
      if (it == std::end(kFailOn))
        throw UsageError(fmt::format("--fail-on: unknown category '{}' (one of: {})", name,
                                     util::join(fail_on_names(), ", ")));
      named.push_back(it);
    }
  const bool any = std::any_of(named.begin(), named.end(),
                               [&r](const FailOn* f) { return !(r.*(f->list)).empty(); });
  return any ? exit_code::new_failures : exit_code::ok;
}

}  // namespace portcheck
