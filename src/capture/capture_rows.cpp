#include "src/capture/capture_rows.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "src/core/manifest.hpp"
#include "src/core/specialization.hpp"
#include "src/run/worker_protocol.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace portcheck {

namespace {

bool contains_null(const nlohmann::json& value) {
  if (value.is_null()) return true;
  if (value.is_array() || value.is_object())
    return std::any_of(value.begin(), value.end(), [](const auto& v) { return contains_null(v); });
  return false;
}

// The manifest's spelling of a constexpr value, or nullopt when TOML cannot hold it.
std::optional<nlohmann::json> manifest_constant(const nlohmann::json& value) {
  if (value.is_null()) return nlohmann::json{{"none", true}};
  if (contains_null(value)) return std::nullopt;
  return value;
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return value.dump();
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  if (value.is_array()) {
    std::vector<std::string> parts;
    for (const auto& item : value) parts.push_back(value_text(item));
    return util::join(parts, "x");
  }
  if (value.is_object()) {
    if (value.contains("none")) return "None";
    if (value.contains("constexpr")) return value_text(value["constexpr"]);
    if (value.contains("jit_function")) {
      const auto text = value["jit_function"].get<std::string>();
      return text.substr(text.rfind(':') + 1);
    }
  }
  return value.dump();
}

std::string sanitize_name(const std::string& text) {
  std::string out;
  for (char ch : text) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '+' || ch == '=' ||
                    ch == '-';
    out += ok ? ch : '_';
  }
  return out;
}

std::string base_type(const std::string& type) {
  return type.ends_with(":16") ? type.substr(0, type.size() - 3) : type;
}

bool is_pointer(const std::string& type) { return type.starts_with("*"); }

std::string element_type(const std::string& type) {
  std::string t = base_type(type).substr(1);
  return t.starts_with("k") ? t.substr(1) : t;
}

const nlohmann::json* find_field(const OrderedFields& fields, const std::string& name) {
  for (const auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}

// The type of an argument as text: "*fp16:16", or a tuple's types joined: "*fp32x*fp32".
std::string type_text(const nlohmann::json& type) {
  if (type.is_string()) return type.get<std::string>();
  std::vector<std::string> parts;
  if (type.is_array())
    for (const auto& t : type) parts.push_back(type_text(t));
  return util::join(parts, "x");
}

// What a row says about one argument: "=64" for a constant, else its type string. Rows written
// as a whole specialisation are read from it, so that they too are named by what differs.
std::string arg_facet(const CapturedRow& row, const std::string& name, std::size_t index) {
  if (const auto* c = find_field(row.constants, name)) return fmt::format("={}", value_text(*c));
  if (const auto* t = find_field(row.signature, name)) return t->get<std::string>();
  if (!row.specialization) return {};
  const auto spec = nlohmann::json::parse(*row.specialization);
  const auto type = spec["signature"].value(name, nlohmann::json());
  if (type == "constexpr") {
    const auto& keys = spec["constant_keys"];
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == nlohmann::json::array({index}))
        return fmt::format("={}", value_text(spec["constant_vals"][i]));
    return {};
  }
  return type_text(type);
}

std::string dtype_facet(const CapturedRow& row) {
  std::vector<std::string> seen;
  for (const auto& [name, type] : row.signature) {
    const auto text = type.get<std::string>();
    if (!is_pointer(text)) continue;
    const auto element = element_type(text);
    if (std::find(seen.begin(), seen.end(), element) == seen.end()) seen.push_back(element);
  }
  return util::join(seen, "-");
}

// Orders "BLOCK=32" before "BLOCK=128": runs of digits compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      const auto na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

// One way rows can differ, with the token each row gets for it ("" for none).
using Facet = std::vector<std::string>;

// The ways the rows of one kernel differ, most telling first: element types, constexpr values
// (ints equal to 1 included), options, then types and alignment of the other arguments.
std::vector<Facet> facets_of(const std::vector<CapturedRow>& rows,
                             const std::vector<std::string>& arg_names) {
  std::vector<Facet> constexpr_facets, option_facets, type_facets;
  Facet dtype, spec;
  for (const auto& row : rows) {
    dtype.push_back(dtype_facet(row));
    spec.push_back(row.specialization ? "spec" : "");
  }
  for (std::size_t index = 0; index < arg_names.size(); ++index) {
    const auto& name = arg_names[index];
    Facet as_constant, as_type, as_alignment;
    // Each row's text for this argument, computed once: whole-specialisation rows parse JSON.
    std::vector<std::string> text;
    text.reserve(rows.size());
    for (const auto& row : rows) text.push_back(arg_facet(row, name, index));
    const bool any_constant =
        std::any_of(text.begin(), text.end(), [](const auto& t) { return t.starts_with("="); });
    bool any_divisible = false;
    for (const auto& theirs : text)
      any_divisible |= !theirs.starts_with("=") && theirs.ends_with(":16");
    for (const auto& mine : text) {
      bool other_base = false;
      for (const auto& theirs : text)
        if (!theirs.starts_with("=") && !theirs.empty())
          other_base |= base_type(theirs) != base_type(mine);
      const bool other_divisible = any_divisible;
      const bool constant = mine.starts_with("=");
      as_constant.push_back(constant ? name + mine
                            : any_constant && !mine.empty()
                                ? name + "." +
                                      (is_pointer(mine) ? element_type(mine) : base_type(mine))
                                : "");
      as_type.push_back(!constant && !mine.empty() && other_base && !is_pointer(mine)
                            ? name + "." + base_type(mine)
                            : "");
      as_alignment.push_back(!constant && !mine.empty() && other_divisible && !mine.ends_with(":16")
                                 ? name + (is_pointer(mine) ? ".unaligned" : ".not16")
                                 : "");
    }
    constexpr_facets.push_back(as_constant);
    type_facets.push_back(as_type);
    type_facets.push_back(as_alignment);
  }
  std::set<std::string> option_names;
  for (const auto& row : rows)
    for (const auto& [k, v] : row.options) option_names.insert(k);
  for (const auto& option : option_names) {
    Facet facet;
    for (const auto& row : rows) {
      const auto* mine = find_field(row.options, option);
      facet.push_back(mine ? option + "=" + value_text(*mine) : "");
    }
    option_facets.push_back(facet);
  }
  std::vector<Facet> out{spec, dtype};
  for (auto* group : {&constexpr_facets, &option_facets, &type_facets})
    out.insert(out.end(), group->begin(), group->end());
  return out;
}

// A kernel with many optional pointers, dtypes and flags over a test matrix tells its rows apart
// by many facets: names of 279 characters were seen on a real library, and `check` refuses names
// over 200. A long name is cut to its readable start, at a facet's end, and a hash of the whole
// (unique within the kernel as the whole names are, the same on every run and machine); the
// whole name stays beside it as a comment in the manifest.
constexpr std::size_t kLongestVariantName = 64;
constexpr std::size_t kReadableStart = 48;

std::string shortened(const std::string& name) {
  auto start = name.substr(0, kReadableStart);
  if (const auto cut = start.rfind('-'); cut != std::string::npos && cut > kReadableStart / 2)
    start.resize(cut);
  return start + "-" + util::sha1_hex(name).substr(0, 10);
}

// The rows' names, unique by construction. A name only its row wants, short enough, is its own;
// every other row (one of several wanting a name, or wanting one too long) takes the first of
// "name", "name-2", "name-3", ... (each shortened when too long) that no row has taken, so that
// a launch whose own name is what another's would become ("x-2", or a shortened "x-<hash>")
// keeps its own and the other moves on.
void assign_unique_names(std::vector<CapturedRow>& rows, const std::vector<std::string>& wanted) {
  std::map<std::string, int> wanting;
  for (const auto& name : wanted) ++wanting[name];
  std::set<std::string> taken;
  std::vector<bool> named(rows.size(), false);
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (wanting[wanted[i]] == 1 && wanted[i].size() <= kLongestVariantName) {
      rows[i].variant = wanted[i];
      rows[i].variant_in_full.clear();
      taken.insert(wanted[i]);
      named[i] = true;
    }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (named[i]) continue;
    for (int n = 1;; ++n) {
      const auto in_full = n == 1 ? wanted[i] : fmt::format("{}-{}", wanted[i], n);
      const bool too_long = in_full.size() > kLongestVariantName;
      const auto name = too_long ? shortened(in_full) : in_full;
      if (!taken.insert(name).second) continue;
      rows[i].variant = name;
      rows[i].variant_in_full = too_long ? in_full : "";
      break;
    }
  }
}

// Names each row by what sets it apart from the kernel's other rows, using a facet only when it
// tells apart rows that the facets before it left together: short names that stay unique.
void name_variants(std::vector<CapturedRow>& rows, const std::vector<std::string>& arg_names) {
  if (rows.size() == 1) {
    rows.front().variant.clear();
    rows.front().variant_in_full.clear();
  }
  if (rows.size() < 2) return;
  std::vector<std::vector<std::string>> tokens(rows.size());
  const auto distinct = [&](const std::vector<std::vector<std::string>>& t) {
    return std::set<std::vector<std::string>>(t.begin(), t.end()).size();
  };
  for (const auto& facet : facets_of(rows, arg_names)) {
    auto tried = tokens;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!facet[i].empty()) tried[i].push_back(facet[i]);
    if (distinct(tried) > distinct(tokens)) tokens = std::move(tried);
    if (distinct(tokens) == rows.size()) break;
  }
  std::vector<std::string> wanted;
  wanted.reserve(tokens.size());
  for (const auto& t : tokens)
    wanted.push_back(sanitize_name(t.empty() ? "default" : util::join(t, "-")));
  assign_unique_names(rows, wanted);
  std::sort(rows.begin(), rows.end(), [](const CapturedRow& a, const CapturedRow& b) {
    return natural_less(a.variant, b.variant);
  });
}

// The name `check` imports the kernel by; records of older hooks name only the function.
const std::string& attribute_of(const CapturedLaunch& launch) {
  return launch.attribute.empty() ? launch.qualname : launch.attribute;
}

bool is_installed_location(const std::filesystem::path& folder) {
  for (const auto& part : folder)
    if (part == "site-packages" || part == "dist-packages") return true;
  return false;
}

// Relative to the manifest's folder when both lie in one tree (a repository), else absolute.
std::string display(const std::filesystem::path& file, const std::filesystem::path& root) {
  const auto a = file.lexically_normal(), b = root.lexically_normal();
  auto ia = a.begin(), ib = b.begin();
  int shared = 0;
  for (; ia != a.end() && ib != b.end() && *ia == *ib; ++ia, ++ib) ++shared;
  // "/" and one folder under it ("/tmp", "/home") are not a common project.
  if (shared <= 2) return a.string();
  const auto relative = a.lexically_relative(b);
  return relative.empty() ? a.string() : relative.string();
}

}  // namespace

void name_rows(CapturedKernel& kernel) { name_variants(kernel.rows, kernel.arg_names); }

std::string CapturedRow::identity() const {
  nlohmann::json j = nlohmann::json::array();
  for (const auto* fields : {&signature, &constants, &options}) {
    auto part = nlohmann::json::array();
    for (const auto& [k, v] : *fields) part.push_back({k, v});
    std::sort(part.begin(), part.end());
    j.push_back(part);
  }
  j.push_back(specialization.value_or(""));
  return j.dump();
}

CaptureRecords read_capture_records(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(folder))
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
      if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  CaptureRecords out;
  std::set<std::string> warnings;
  for (const auto& file : files) {
    std::ifstream in(file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (line.empty()) continue;
      try {
        auto read = read_capture_record(nlohmann::json::parse(line));
        if (!read.value) {
          if (out.bad_lines++ == 0)
            out.first_bad_line = fmt::format("{} line {}: {}", file.string(), number, read.problem);
          continue;
        }
        if (const auto* warning = std::get_if<CaptureWarning>(&*read.value)) {
          if (warnings.insert(warning->warning).second) out.warnings.push_back(warning->warning);
          continue;
        }
        if (auto* tuned = std::get_if<CapturedAutotunedLaunch>(&*read.value)) {
          out.autotuned.push_back(std::move(*tuned));
          continue;
        }
        auto& launch = std::get<CapturedLaunch>(*read.value);
        if (!specialization_shape_problem(launch.specialization).empty()) {
          ++out.bad_lines;  // written by a process that corrupted the hook's output
          continue;
        }
        out.launches.push_back(std::move(launch));
      } catch (const nlohmann::json::exception&) {
        // A process killed mid-write leaves a torn last line; the others still count.
        if (out.bad_lines++ == 0)
          out.first_bad_line = fmt::format("{} line {}: not JSON", file.string(), number);
      }
    }
  }
  return out;
}

CapturedRow row_from_launch(const CapturedLaunch& launch) {
  const auto& spec = launch.specialization;
  CapturedRow row;
  bool expressible = true;
  std::map<int, nlohmann::json> constants;
  const auto& ckeys = spec.at("constant_keys");
  const auto& cvals = spec.at("constant_vals");
  for (std::size_t i = 0; i < ckeys.size() && i < cvals.size(); ++i) {
    if (ckeys[i].size() != 1) {
      expressible = false;  // a constexpr inside a tuple argument
      continue;
    }
    constants[ckeys[i][0].get<int>()] = cvals[i];
  }
  std::set<int> divisible;
  const auto& akeys = spec.at("attrs_keys");
  const auto& avals = spec.at("attrs_vals");
  for (std::size_t i = 0; i < akeys.size() && i < avals.size(); ++i) {
    for (const auto& attr : avals[i]) {
      if (akeys[i].size() == 1 && attr == nlohmann::json::array({"tt.divisibility", 16}))
        divisible.insert(akeys[i][0].get<int>());
      else
        expressible = false;
    }
  }
  const auto& signature = spec.at("signature");
  for (std::size_t i = 0; i < launch.arg_names.size(); ++i) {
    const auto& name = launch.arg_names[i];
    const auto type = signature.contains(name) ? signature[name] : nlohmann::json();
    const int index = static_cast<int>(i);
    if (type == "constexpr") {
      const auto it = constants.find(index);
      const auto value = it == constants.end() ? std::nullopt : manifest_constant(it->second);
      if (!value) {
        expressible = false;
        continue;
      }
      row.constants.emplace_back(name, *value);
    } else if (type.is_string()) {
      const auto text = type.get<std::string>() + (divisible.count(index) ? ":16" : "");
      if (!is_valid_type_string(text)) expressible = false;
      row.signature.emplace_back(name, text);
    } else {
      expressible = false;  // a tuple argument
    }
  }
  auto options = nlohmann::json::object();
  for (const auto& [k, v] : launch.explicit_options.items()) {
    if (v.is_null()) continue;  // None means "the target's default"
    row.options.emplace_back(k, v);
    options[k] = v;
  }
  if (!expressible) {
    auto whole = spec;
    whole.erase("key");
    whole.erase("target");
    // Only the caller's options: the rest were the stand-in target's defaults, and each target
    // must compile with its own.
    whole["options"] = options;
    row.signature.clear();
    row.constants.clear();
    row.options.clear();
    row.specialization = whole.dump();
  }
  row.captured = launch.test;
  if (!launch.persona.empty()) row.captured_as.push_back(launch.persona);
  return row;
}

namespace {

// The launches of one Python function, deduplicated into rows.
struct LaunchGroup {
  const CapturedLaunch* first = nullptr;
  std::vector<CapturedRow> rows;
  std::map<std::string, std::size_t> identities;  // -> its index in rows
  std::set<std::set<std::size_t>> autotuned;      // each autotuned launch's rows
};

// Where a launch record (by its identity) became a row: its kernel's group, the row's index.
using RowOfLaunch = std::map<std::string, std::pair<LaunchGroup*, std::size_t>>;

// Each autotuned launch of two or more distinct rows, in its kernel's group. A launch whose
// configs are not all known rows of one kernel (records lost with a killed process) is left out:
// its configs are then judged one by one, as before.
void add_autotuned(const std::vector<CapturedAutotunedLaunch>& autotuned, const RowOfLaunch& rows) {
  for (const auto& launch : autotuned) {
    LaunchGroup* group = nullptr;
    std::set<std::size_t> members;
    bool whole = true;
    for (const auto& identity : launch.configs) {
      const auto it = rows.find(identity);
      whole = whole && it != rows.end() && (group == nullptr || group == it->second.first);
      if (!whole) break;
      group = it->second.first;
      members.insert(it->second.second);
    }
    if (whole && members.size() > 1) group->autotuned.insert(std::move(members));
  }
}

// Names each autotuned launch of a kernel after the order of its first row ("launch-1", ...)
// and gives its rows the name; rows are in their final order here.
void name_autotuned(CapturedKernel& kernel, const std::vector<std::set<std::size_t>>& launches,
                    const std::vector<std::size_t>& final_index) {
  std::vector<std::pair<std::size_t, std::size_t>> first_row;  // (first row, launch)
  for (std::size_t l = 0; l < launches.size(); ++l) {
    std::size_t first = kernel.rows.size();
    for (const auto r : launches[l]) first = std::min(first, final_index[r]);
    first_row.emplace_back(first, l);
  }
  std::sort(first_row.begin(), first_row.end());
  for (std::size_t n = 0; n < first_row.size(); ++n)
    for (const auto r : launches[first_row[n].second])
      kernel.rows[final_index[r]].autotune.push_back(fmt::format("launch-{}", n + 1));
}

// A launch already seen as `row` under another persona: the row is shared, and says so.
void add_personas(CapturedRow& row, const std::vector<std::string>& personas) {
  for (const auto& persona : personas)
    if (std::find(row.captured_as.begin(), row.captured_as.end(), persona) == row.captured_as.end())
      row.captured_as.push_back(persona);
}

// Why `check` could not import the launched kernel again; empty when it can (a generated
// module's text, saved beside the manifest, can be).
std::string why_left_out(const CapturedLaunch& launch) {
  if (!launch.generated_source.empty()) return "";
  auto why = launch.not_importable;
  if (why.empty() && launch.qualname.find_first_of(".<") != std::string::npos)
    why = "it is defined inside a function or class";
  if (why.starts_with("it is defined inside")) why += " (move it to module level to check it)";
  return why;
}

// One line per reason: a library generating kernels at run time can leave out dozens.
std::vector<std::string> left_out_warnings(
    const std::map<std::string, std::vector<std::string>>& left_out) {
  std::vector<std::string> warnings;
  for (const auto& [why, kernels] : left_out) {
    if (kernels.size() == 1) {
      warnings.push_back(
          fmt::format("{} left out: `check` cannot import it again: {}", kernels.front(), why));
      continue;
    }
    std::vector<std::string> names;
    for (std::size_t i = 0; i < kernels.size() && i < 3; ++i)
      names.push_back(kernels[i].substr(0, kernels[i].find(' ')));
    warnings.push_back(
        fmt::format("{} kernels left out: `check` cannot import them again: {}: {}{}",
                    kernels.size(), why, util::join(names, ", "),
                    kernels.size() > 3 ? fmt::format(" and {} more", kernels.size() - 3) : ""));
  }
  return warnings;
}

// 16 hex digits of the SHA-256 of a generated module's text.
std::string generated_digest(const std::string& source) {
  const auto digest = util::sha256(source);
  std::string hex;
  for (std::size_t i = 0; i < 8; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

// "gen_<generated_digest>.py": named by content, so an unchanged module keeps its file from one
// capture to the next.
std::string generated_file_name(const std::string& source) {
  return "gen_" + generated_digest(source) + ".py";
}

// The kernel of one group: its name (qualified by the module when another module's kernel has
// the same), its target, and the pythonpath entry `check` needs to import it.
CapturedKernel kernel_of(LaunchGroup& group, bool name_taken_twice,
                         const std::filesystem::path& manifest_dir) {
  const auto& first = *group.first;
  CapturedKernel kernel;
  // A name two kernels share is told apart by where each comes from: its module, or for a
  // generated one (Inductor writes every benchmarked template as `triton_mm`) its file's digest.
  const auto origin = first.generated_source.empty()
                          ? first.module + "."
                          : generated_digest(first.generated_source).substr(0, 8) + ".";
  kernel.name =
      name_taken_twice ? sanitize_name(origin + attribute_of(first)) : attribute_of(first);
  kernel.source_file = display(first.file, manifest_dir);
  kernel.source_line = first.line;
  // A folder `check` must put on sys.path to import from there, unless it is the manifest's own
  // (always there) or an installed location (there too).
  const auto needs = [&](const std::filesystem::path& folder) {
    const auto root = folder.lexically_normal();
    if (root != manifest_dir.lexically_normal() &&
        (root.string() + "/") != manifest_dir.lexically_normal().string() &&
        !is_installed_location(root))
      kernel.python_path.push_back(display(root, manifest_dir));
  };
  if (!first.generated_source.empty()) {
    kernel.generated_file = generated_file_name(first.generated_source);
    kernel.generated_source = first.generated_source;
    kernel.target =
        fmt::format("{}/{}:{}", kGeneratedFolder, kernel.generated_file, attribute_of(first));
    for (const auto& folder : first.generated_paths) needs(folder);
  } else if (first.import_root && first.module != "__main__") {
    kernel.target = first.module + ":" + attribute_of(first);
    needs(*first.import_root);
  } else {
    kernel.target = display(first.file, manifest_dir) + ":" + attribute_of(first);
  }
  kernel.rows = std::move(group.rows);
  kernel.arg_names = first.arg_names;
  name_rows(kernel);  // sorts the rows
  if (!group.autotuned.empty()) {
    std::vector<std::size_t> final_index(kernel.rows.size());
    for (std::size_t i = 0; i < kernel.rows.size(); ++i)
      final_index[group.identities.at(kernel.rows[i].identity())] = i;
    name_autotuned(kernel, {group.autotuned.begin(), group.autotuned.end()}, final_index);
  }
  return kernel;
}

}  // namespace

CaptureSummary build_captured_kernels(const std::vector<CapturedLaunch>& launches,
                                      const std::filesystem::path& manifest_dir,
                                      const std::vector<CapturedAutotunedLaunch>& autotuned) {
  CaptureSummary summary;
  summary.launches = static_cast<int>(launches.size());
  std::map<std::pair<std::string, std::string>, LaunchGroup> groups;  // (module or file, qualname)
  std::set<std::string> skipped;
  std::map<std::string, std::vector<std::string>> left_out;  // reason -> "kernel (file:line)"
  RowOfLaunch row_of_launch;
  for (const auto& launch : launches) {
    if (const auto why = why_left_out(launch); !why.empty()) {
      if (skipped.insert(launch.module + ":" + launch.qualname).second)
        left_out[why].push_back(fmt::format("{} ({}:{})", launch.qualname,
                                            display(launch.file, manifest_dir), launch.line));
      continue;
    }
    // A generated module is known by its text: the same kernel generated into another temporary
    // file by another process is one kernel.
    const auto where_from = !launch.generated_source.empty()
                                ? generated_file_name(launch.generated_source)
                            : launch.import_root ? launch.module
                                                 : launch.file.string();
    auto& group = groups[{where_from, attribute_of(launch)}];
    if (group.first == nullptr) group.first = &launch;
    auto row = row_from_launch(launch);
    if (row.captured.empty())
      row.captured = display(launch.site.substr(0, launch.site.rfind(':')), manifest_dir) +
                     launch.site.substr(std::min(launch.site.size(), launch.site.rfind(':')));
    const auto [seen, added] = group.identities.emplace(row.identity(), group.rows.size());
    if (added)
      group.rows.push_back(std::move(row));
    else
      add_personas(group.rows[seen->second], row.captured_as);
    if (!launch.identity.empty()) row_of_launch[launch.identity] = {&group, seen->second};
  }
  add_autotuned(autotuned, row_of_launch);
  summary.warnings = left_out_warnings(left_out);

  std::map<std::string, int> name_count;
  for (const auto& [key, group] : groups) ++name_count[attribute_of(*group.first)];
  for (auto& [key, group] : groups)
    summary.kernels.push_back(
        kernel_of(group, name_count[attribute_of(*group.first)] > 1, manifest_dir));
  std::sort(summary.kernels.begin(), summary.kernels.end(),
            [](const CapturedKernel& a, const CapturedKernel& b) {
              return std::tie(a.source_file, a.source_line, a.name) <
                     std::tie(b.source_file, b.source_line, b.name);
            });
  return summary;
}

}  // namespace portcheck
