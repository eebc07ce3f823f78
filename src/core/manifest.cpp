#include "src/core/manifest.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/errors.hpp"
#include "src/core/remote_url.hpp"
#include "src/core/specialization.hpp"
#include "util/ascii.hpp"
#include "util/bounded_json.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace portcheck {

std::string Location::describe(const std::string& key) const {
  return line > 0 ? fmt::format("{}:{}: {}", file.string(), line, key)
                  : fmt::format("{}: {}", file.string(), key);
}

std::string KernelRef::spelled() const {
  return module.empty() ? fmt::format("{}:{}", file.string(), function)
                        : fmt::format("{}:{}", module, function);
}

Location KernelRow::location_of(const std::string& key) const {
  for (std::string k = key;;) {
    if (const auto it = key_locations.find(k); it != key_locations.end()) return it->second;
    const auto dot = k.rfind('.');
    if (dot == std::string::npos) return where;
    k.resize(dot);
  }
}

namespace {

const std::set<std::string> kScalarTypes = {
    "i1",      "i8",    "i16",      "i32",     "i64",      "u1",   "u8",   "u16",  "u32", "u64",
    "fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"};

// Names are checked by hand, not by std::regex: libstdc++'s matcher recurses once per character
// and a name of 50,000 characters overflowed the stack (issue 14).
bool word_char(char ch, std::string_view extra) {
  return util::ascii::is_word(ch) || extra.find(ch) != std::string_view::npos;
}
bool all_word_chars(std::string_view s, std::string_view extra) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [&](char ch) { return word_char(ch, extra); });
}
using util::ascii::is_identifier;
bool is_dotted_name(std::string_view s) {
  for (std::size_t start = 0;;) {
    const auto dot = s.find('.', start);
    if (!is_identifier(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}
// A user's text quoted in an error: the line stays one line of sensible length.
std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 80;
  return text.size() <= kShown ? std::string(text) : std::string(text.substr(0, kShown)) + "...";
}

// Why a path named by the manifest cannot be used, or "" when it is there. The non-throwing
// checks: a path built from the user's text may be too long (ENAMETOOLONG) or unreadable, and
// that is the key's error, not an exception (the throwing std::filesystem calls ended the run).
std::string path_problem(const std::filesystem::path& path, std::filesystem::file_type wanted) {
  // Whole paths are what a user needs to see; one longer than PATH_MAX is noise past its start.
  constexpr std::size_t kPathMax = 4096;
  const auto name = path.string().size() <= kPathMax ? path.string() : shown(path.string());
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error && error != std::errc::no_such_file_or_directory && error != std::errc::not_a_directory)
    return fmt::format("{} cannot be used: {}", name, error.message());
  if (!std::filesystem::exists(status)) return fmt::format("{} does not exist", name);
  if (wanted == std::filesystem::file_type::directory && !std::filesystem::is_directory(status))
    return fmt::format("{} is not a folder", name);
  return "";
}

// Row and variant names become folder and file names (export, --save-ir): 255 bytes at most.
constexpr std::size_t kMaxNameLength = 200;
// Tables in signature/constants/options deeper than this are a mistake, and converting one
// 100,000 deep recursed off the stack.
constexpr int kMaxValueDepth = 64;

// The line of a key with more than kMaxValueDepth dots (outside quotes, before its '='), or 0.
// toml++ walks the tables a dotted key opens recursively (update_region_ends): a key 100,000
// levels deep overflowed the stack under AddressSanitizer before our own depth check could run.
int line_of_too_deep_key(std::string_view text) {
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++line) {
    auto end = text.find('\n', i);
    if (end == std::string_view::npos) end = text.size();
    int dots = 0;
    char quote = 0;
    for (std::size_t j = i; j < end; ++j) {
      const char ch = text[j];
      if (quote != 0) {
        if (ch == quote) quote = 0;
      } else if (ch == '"' || ch == '\'') {
        quote = ch;
      } else if (ch == '=' || ch == '#') {
        break;
      } else if (ch == '.' && ++dots > kMaxValueDepth) {
        return line;
      }
    }
    i = end + 1;
  }
  return 0;
}

class Parser {
 public:
  explicit Parser(std::filesystem::path file) : file_(std::move(file)) {}

  Manifest parse() {
    toml::table root;
    try {
      const auto text = util::read_file(file_);
      if (const int line = line_of_too_deep_key(text); line > 0)
        throw UsageError(fmt::format("{}:{}: keys nested deeper than {} levels", file_.string(),
                                     line, kMaxValueDepth));
      root = toml::parse(text, file_.string());
    } catch (const toml::parse_error& e) {
      throw UsageError(fmt::format("{}:{}: invalid TOML: {}", file_.string(), e.source().begin.line,
                                   e.description()));
    }
    Manifest manifest;
    manifest.file = file_;
    manifest.targets = default_target_names();
    for (const auto& [key, node] : root) {
      const std::string k(key.str());
      if (k != "defaults" && k != "kernel")
        fail(node, k, "unknown section (expected [defaults] or [[kernel]])");
    }
    if (const auto* defaults = root.get("defaults")) parse_defaults(*defaults, manifest);
    const auto* kernels = root.get("kernel");
    if (kernels == nullptr || !kernels->is_array_of_tables())
      throw UsageError(fmt::format("{}: no [[kernel]] rows: the manifest lists nothing to check",
                                   file_.string()));
    for (const auto& node : *kernels->as_array()) parse_kernel(*node.as_table(), manifest);
    check_unique_names(manifest);
    return manifest;
  }

 private:
  [[noreturn]] void fail(const toml::node& node, const std::string& key,
                         const std::string& what) const {
    throw UsageError(fmt::format(
        "{}: {}", Location{file_, static_cast<int>(node.source().begin.line)}.describe(key), what));
  }
  Location where(const toml::node& node) const {
    return Location{file_, static_cast<int>(node.source().begin.line)};
  }

  // A kernel or variant name: it becomes part of folder and file names (export, --save-ir), so
  // letters, digits and `extra` only (`extra_shown` says them in the message), 200 at most.
  std::string need_name(const toml::node& node, const std::string& key, std::string_view extra,
                        std::string_view extra_shown) const {
    auto name = need_string(node, key);
    if (name.size() > kMaxNameLength)
      fail(node, key,
           fmt::format("'{}' is longer than {} characters", shown(name), kMaxNameLength));
    if (!all_word_chars(name, extra))
      fail(node, key, fmt::format("'{}': use letters, digits, {}", shown(name), extra_shown));
    return name;
  }

  std::string need_string(const toml::node& node, const std::string& key) const {
    if (const auto* s = node.as_string()) return s->get();
    fail(node, key, "expected a string");
  }

  double need_seconds(const toml::node& node, const std::string& key) const {
    double v = 0;
    if (const auto* i = node.as_integer())
      v = static_cast<double>(i->get());
    else if (const auto* f = node.as_floating_point())
      v = f->get();
    else
      fail(node, key, "expected a number of seconds");
    if (const auto problem = timeout_problem(v); !problem.empty()) fail(node, key, problem);
    return v;
  }

  std::uint64_t need_bytes(const toml::node& node, const std::string& key) const {
    if (const auto* i = node.as_integer()) {
      if (i->get() <= 0) fail(node, key, "must be greater than 0");
      return static_cast<std::uint64_t>(i->get());
    }
    if (const auto* s = node.as_string()) {
      if (auto bytes = util::parse_byte_size(s->get()); bytes && *bytes > 0) return *bytes;
      fail(node, key,
           fmt::format("'{}' is not a size: write it like \"8GiB\" or \"512MiB\"", s->get()));
    }
    fail(node, key, "expected a size such as \"8GiB\"");
  }

  std::vector<std::string> need_targets(const toml::node& node, const std::string& key) const {
    const auto* array = node.as_array();
    if (array == nullptr)
      fail(node, key, "expected a list of targets such as [\"cuda:90\", \"hip:gfx942\"]");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < array->size(); ++i) {
      const auto& item = *array->get(i);
      const auto name = need_string(item, fmt::format("{}[{}]", key, i));
      std::string error;
      if (!parse_target(name, &error)) fail(item, fmt::format("{}[{}]", key, i), error);
      out.push_back(name);
    }
    return out;
  }

  // `autotune = "name"` or a list of names: the autotuned launches (of this [[kernel]]) whose
  // configs the row is one of.
  std::vector<std::string> need_launch_names(const toml::node& node, const std::string& key) const {
    const auto name = [&](const toml::node& item, const std::string& item_key) {
      return need_name(item, item_key, ".+=-", "'_', '-', '.', '+' or '='");
    };
    if (node.as_string() != nullptr) return {name(node, key)};
    const auto* array = node.as_array();
    if (array == nullptr || array->empty())
      fail(node, key,
           "expected the name of an autotuned launch, or a list of them, such as \"matmul-1\"");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < array->size(); ++i)
      out.push_back(name(*array->get(i), fmt::format("{}[{}]", key, i)));
    return out;
  }

  // Folders relative to the manifest's, put on sys.path when the kernels are imported.
  std::vector<std::filesystem::path> need_folders(const toml::node& node,
                                                  const std::string& key) const {
    const auto* array = node.as_array();
    if (array == nullptr) fail(node, key, "expected a list of folders such as [\"src\"]");
    const auto base = std::filesystem::absolute(file_).parent_path();
    std::vector<std::filesystem::path> out;
    for (std::size_t i = 0; i < array->size(); ++i) {
      const auto& item = *array->get(i);
      const auto item_key = fmt::format("{}[{}]", key, i);
      const auto folder = (base / need_string(item, item_key)).lexically_normal();
      if (const auto problem = path_problem(folder, std::filesystem::file_type::directory);
          !problem.empty())
        fail(item, item_key, "folder " + problem);
      out.push_back(folder);
    }
    return out;
  }

  nlohmann::json to_json(const toml::node& node, const std::string& key, int depth = 0) const {
    if (depth > kMaxValueDepth)
      fail(node, shown(key), fmt::format("nested deeper than {} levels", kMaxValueDepth));
    if (const auto* v = node.as_integer()) return v->get();
    if (const auto* v = node.as_floating_point()) return v->get();
    if (const auto* v = node.as_boolean()) return v->get();
    if (const auto* v = node.as_string()) return v->get();
    if (const auto* array = node.as_array()) {
      auto out = nlohmann::json::array();
      for (std::size_t i = 0; i < array->size(); ++i)
        out.push_back(to_json(*array->get(i), fmt::format("{}[{}]", key, i), depth + 1));
      return out;
    }
    if (const auto* table = node.as_table()) {
      auto out = nlohmann::json::object();
      for (const auto& [k, v] : *table)
        out[std::string(k.str())] = to_json(v, key + "." + std::string(k.str()), depth + 1);
      return out;
    }
    fail(node, key, "dates and times are not valid here");
  }

  // Merges a table into `into` key by key, recording where each key was written.
  void merge_table(const toml::node& node, const std::string& field, nlohmann::json& into,
                   KernelRow& row) const {
    const auto* table = node.as_table();
    if (table == nullptr)
      fail(node, row_key(row, field), "expected an inline table such as { name = value }");
    for (const auto& [k, v] : *table) {
      const std::string name(k.str());
      std::string key = field;
      key += ".";
      key += name;
      into[name] = to_json(v, row_key(row, key));
      row.key_locations[key] = where(v);
    }
  }

  static std::string row_key(const KernelRow& row, const std::string& key) {
    return fmt::format("kernel '{}'.{}", row.display_name(), key);
  }

  void parse_defaults(const toml::node& node, Manifest& manifest) const {
    const auto* table = node.as_table();
    if (table == nullptr) fail(node, "defaults", "expected a table");
    for (const auto& [k, v] : *table) {
      const std::string key(k.str());
      const std::string full = "defaults." + key;
      if (key == "targets") {
        manifest.targets = need_targets(v, full);
        if (manifest.targets.empty()) fail(v, full, "the list of targets is empty");
        manifest.targets_where = where(v);
      } else if (key == "triton") {
        const auto* array = v.as_array();
        if (array == nullptr || array->empty())
          fail(v, full, "expected a list such as [\"current\"]");
        manifest.triton.clear();
        for (std::size_t i = 0; i < array->size(); ++i)
          manifest.triton.push_back(need_string(*array->get(i), fmt::format("{}[{}]", full, i)));
      } else if (key == "timeout") {
        manifest.timeout_s = need_seconds(v, full);
      } else if (key == "max_rss") {
        manifest.max_rss_bytes = need_bytes(v, full);
      } else if (key == "pythonpath") {
        manifest.python_path = need_folders(v, full);
      } else if (key == "cache_url") {
        manifest.cache_url = need_string(v, full);
        std::string problem;
        if (!parse_remote_url(*manifest.cache_url, &problem)) fail(v, full, problem);
      } else if (key == "cache_readonly") {
        const auto* flag = v.as_boolean();
        if (flag == nullptr) fail(v, full, "expected true or false");
        manifest.cache_readonly = flag->get();
      } else {
        fail(v, full,
             "unknown key (expected targets, triton, timeout, max_rss, pythonpath, cache_url or "
             "cache_readonly)");
      }
    }
  }

  KernelRef parse_ref(const toml::node& node, const std::string& key) const {
    const auto text = need_string(node, key);
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
      fail(node, key,
           fmt::format("'{}' must be module:function or path/to/file.py:function", text));
    KernelRef ref;
    ref.function = text.substr(colon + 1);
    ref.import_root = std::filesystem::absolute(file_).parent_path();
    const auto where_from = text.substr(0, colon);
    if (!is_identifier(ref.function))
      fail(node, key, fmt::format("'{}' is not a Python function name", shown(ref.function)));
    if (where_from.ends_with(".py")) {
      ref.file = (ref.import_root / where_from).lexically_normal();
      if (const auto problem = path_problem(ref.file, std::filesystem::file_type::regular);
          !problem.empty())
        fail(node, key, "file " + problem);
    } else if (is_dotted_name(where_from)) {
      ref.module = where_from;
    } else {
      fail(node, key,
           fmt::format("'{}' is neither a module name nor a .py file", shown(where_from)));
    }
    return ref;
  }

  void validate_types(const KernelRow& row) const {
    for (const auto& [name, type] : row.signature.items()) {
      const auto key = "signature." + name;
      const auto loc = row.location_of(key);
      if (!type.is_string())
        throw UsageError(
            fmt::format("{}: expected a Triton type string such as \"*fp16:16\" or \"i32\"",
                        loc.describe(row_key(row, key))));
      std::string why;
      if (!is_valid_type_string(type.get<std::string>(), &why))
        throw UsageError(fmt::format("{}: {}", loc.describe(row_key(row, key)), why));
      if (row.constants.contains(name))
        throw UsageError(fmt::format("{}: '{}' is given both a type and a constant value",
                                     loc.describe(row_key(row, key)), name));
    }
  }

  // Applies the fields a [[kernel]] and a [[kernel.variant]] share.
  void apply_fields(const toml::table& table, KernelRow& row, bool is_variant) const {
    for (const auto& [k, v] : table) {
      const std::string key(k.str());
      if (key == "name" || (key == "variant" && !is_variant)) continue;
      if (key == "target" && !is_variant) {
        auto python_path = std::move(row.ref.python_path);
        row.ref = parse_ref(v, row_key(row, key));
        row.ref.python_path = std::move(python_path);
      } else if (key == "signature") {
        merge_table(v, key, row.signature, row);
      } else if (key == "constants") {
        merge_table(v, key, row.constants, row);
      } else if (key == "options") {
        merge_table(v, key, row.options, row);
      } else if (key == "specialization") {
        const auto text = need_string(v, row_key(row, key));
        nlohmann::json parsed;
        try {
          parsed = util::parse_json_bounded(text);
        } catch (const util::JsonInputError& e) {
          fail(v, row_key(row, key),
               fmt::format("is not valid JSON: {} (paste the text serialize_specialization_data "
                           "returned)",
                           e.what()));
        }
        if (const auto why = specialization_shape_problem(parsed); !why.empty())
          fail(v, row_key(row, key), why);
        row.specialization = text;
      } else if (key == "targets") {
        row.targets = need_targets(v, row_key(row, key));
      } else if (key == "xfail") {
        row.xfail = need_targets(v, row_key(row, key));
      } else if (key == "timeout") {
        row.timeout_s = need_seconds(v, row_key(row, key));
      } else if (key == "max_rss") {
        row.max_rss_bytes = need_bytes(v, row_key(row, key));
      } else if (key == "captured") {
        row.captured = need_string(v, row_key(row, key));
      } else if (key == "captured_as") {
        row.captured_as = need_targets(v, row_key(row, key));
      } else if (key == "autotune") {
        row.autotune = need_launch_names(v, row_key(row, key));
      } else if (key == "pythonpath" && !is_variant) {
        row.ref.python_path = need_folders(v, row_key(row, key));
      } else {
        fail(v, row_key(row, key),
             is_variant
                 ? "unknown key (a variant takes name, signature, constants, options, "
                   "specialization, targets, xfail, timeout, max_rss, captured, captured_as, "
                   "autotune)"
                 : "unknown key (a kernel takes name, target, signature, constants, options, "
                   "specialization, targets, xfail, timeout, max_rss, captured, captured_as, "
                   "autotune, pythonpath, variant)");
      }
      row.key_locations[key] = where(v);
    }
  }

  void parse_kernel(const toml::table& table, Manifest& manifest) const {
    KernelRow base;
    base.where = where(table);
    const auto* name = table.get("name");
    if (name == nullptr) fail(table, "kernel", "missing key 'name'");
    base.kernel = need_name(*name, "kernel.name", ".+-", "'_', '-', '.' or '+'");
    if (table.get("target") == nullptr)
      fail(table, row_key(base, "target"),
           "missing key 'target' (module:function or file.py:function)");
    apply_fields(table, base, false);

    const auto* variants = table.get("variant");
    if (variants == nullptr) {
      finish_row(base, manifest);
      return;
    }
    if (!variants->is_array_of_tables())
      fail(*variants, row_key(base, "variant"), "use [[kernel.variant]] tables");
    std::vector<KernelRow> rows;
    for (const auto& node : *variants->as_array())
      rows.push_back(parse_variant(*node.as_table(), base));
    const auto added = left_to_variants(base, rows);
    if (added.empty())
      finish_row(base, manifest);  // its own keys are a whole specialisation: a row too
    else if (auto note = value_checked_nowhere(base, rows, added))
      manifest.notes.push_back(std::move(*note));
    for (auto& row : rows) finish_row(row, manifest);
  }

  KernelRow parse_variant(const toml::table& vt, const KernelRow& base) const {
    KernelRow row = base;
    row.where = where(vt);
    const auto* vname = vt.get("name");
    if (vname == nullptr) fail(vt, row_key(base, "variant"), "missing key 'name'");
    row.variant =
        need_name(*vname, row_key(base, "variant.name"), ".+=-", "'_', '-', '.', '+' or '='");
    apply_fields(vt, row, true);
    return row;
  }

  // What the variants add to the kernel's own keys: the arguments it leaves to them, and
  // "specialization" when they bring a whole one it lacks. Each variant is checked complete
  // against the function before anything compiles, so the kernel's own keys form a complete
  // specialisation (and it is a row of its own) exactly when they add nothing.
  static std::vector<std::string> left_to_variants(const KernelRow& base,
                                                   const std::vector<KernelRow>& variants) {
    std::vector<std::string> added;
    const auto add = [&](const std::string& name) {
      if (std::find(added.begin(), added.end(), name) == added.end()) added.push_back(name);
    };
    if (base.specialization) return added;
    for (const auto& row : variants) {
      if (row.specialization) add("specialization");
      for (const auto* table : {&row.signature, &row.constants})
        for (const auto& [name, value] : table->items())
          if (!base.signature.contains(name) && !base.constants.contains(name)) add(name);
    }
    return added;
  }

  // A kernel that is not a row yet holds a value every variant replaces: that value is compiled
  // in no row, which looks like a kernel meant as a row that misses an argument.
  static std::optional<std::string> value_checked_nowhere(const KernelRow& base,
                                                          const std::vector<KernelRow>& variants,
                                                          const std::vector<std::string>& added) {
    for (const auto field : {&KernelRow::signature, &KernelRow::constants}) {
      for (const auto& item : (base.*field).items()) {
        const bool replaced_everywhere =
            std::all_of(variants.begin(), variants.end(), [&](const KernelRow& row) {
              return (row.*field).value(item.key(), nlohmann::json()) != item.value();
            });
        if (!replaced_everywhere) continue;
        const auto key = fmt::format(
            "{}.{}", field == &KernelRow::signature ? "signature" : "constants", item.key());
        const auto missing = util::join(added, ", ");
        return fmt::format(
            "{}: {} is compiled in no row: every variant replaces it, and the [[kernel]] is not a "
            "row of its own because it leaves {} to its variants (give {} there to check it as "
            "a row too)",
            base.location_of(key).describe(row_key(base, key)), item.value().dump(), missing,
            missing);
      }
    }
    return std::nullopt;
  }

  void finish_row(KernelRow& row, Manifest& manifest) const {
    if (!row.specialization) validate_types(row);
    for (const auto& folder : manifest.python_path)
      if (std::find(row.ref.python_path.begin(), row.ref.python_path.end(), folder) ==
          row.ref.python_path.end())
        row.ref.python_path.push_back(folder);
    // An xfail naming a target this run does not check is allowed: --targets varies per run.
    manifest.rows.push_back(row);
  }

  void check_unique_names(const Manifest& manifest) const {
    std::set<std::string> seen;
    for (const auto& row : manifest.rows)
      if (!seen.insert(row.display_name()).second)
        throw UsageError(
            fmt::format("{}: row '{}' appears twice: give each kernel or variant its own name",
                        row.where.describe("kernel.name"), row.display_name()));
  }

  std::filesystem::path file_;
};

}  // namespace

bool is_valid_type_string(const std::string& type, std::string* why) {
  const auto fail = [&](std::string message) {
    if (why) *why = std::move(message);
    return false;
  };
  std::string base = type;
  if (const auto colon = base.rfind(':'); colon != std::string::npos) {
    const auto suffix = base.substr(colon + 1);
    if (suffix != "16")
      return fail(
          fmt::format("'{}': the only attribute suffix is ':16' (divisible by 16); an int "
                      "equal to 1 belongs in constants",
                      type));
    base.resize(colon);
  }
  if (base.starts_with("tensordesc<") && base.ends_with(">")) return true;
  if (base == "nvTmaDesc") return true;
  std::string scalar = base;
  if (scalar.starts_with("*")) {
    scalar.erase(0, 1);
    if (scalar.starts_with("k")) scalar.erase(0, 1);
  } else if (type.size() != base.size() && base != "i32" && base != "i64" && base != "u32" &&
             base != "u64") {
    return fail(fmt::format("'{}': ':16' applies to pointers and integers only", type));
  }
  if (kScalarTypes.count(scalar) == 0)
    return fail(
        fmt::format("'{}' is not a Triton type: use *fp16, *bf16, *fp32, *i8, i32, i64, fp32, "
                    "u1, ... optionally with ':16'",
                    type));
  return true;
}

Manifest load_manifest(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::exists(file, error))
    throw UsageError(
        fmt::format("{}: no such manifest (write a portcheck.toml, pass --manifest FILE, or "
                    "try --demo)",
                    file.string()));
  return Parser(file).parse();
}

std::string timeout_problem(double seconds) {
  if (seconds >= kMinTimeoutSeconds && seconds <= kMaxTimeoutSeconds) return {};
  return fmt::format("must be between {} and {:.0f} seconds (a week)", kMinTimeoutSeconds,
                     kMaxTimeoutSeconds);
}

nlohmann::json kernel_ref_json(const KernelRef& ref) {
  nlohmann::json j;
  if (!ref.file.empty())
    j["file"] = ref.file.string();
  else
    j["module"] = ref.module;
  j["function"] = ref.function;
  j["import_root"] = ref.import_root.string();
  if (!ref.python_path.empty()) {
    j["pythonpath"] = nlohmann::json::array();
    for (const auto& folder : ref.python_path) j["pythonpath"].push_back(folder.string());
  }
  return j;
}

}  // namespace portcheck
