#include "src/capture/manifest_writer.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "util/ascii.hpp"
#include "util/strings.hpp"
#include "util/text_cursor.hpp"

namespace portcheck {

namespace {

// A bare TOML key ([A-Za-z0-9_-]+) is written as it is, any other quoted.
std::string toml_key(const std::string& key) {
  const auto bare_char = [](char ch) {
    return util::ascii::is_alnum(ch) || ch == '_' || ch == '-';
  };
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), bare_char);
  return bare ? key : toml_value(nlohmann::json(key));
}

std::string inline_table(const OrderedFields& fields) {
  std::string out = "{ ";
  for (std::size_t i = 0; i < fields.size(); ++i)
    out += fmt::format("{}{} = {}", i ? ", " : "", toml_key(fields[i].first),
                       toml_value(fields[i].second));
  return out + " }";
}

std::string string_value(const std::string& text) {
  // JSON text (a serialised specialisation) reads best as a literal string, which cannot hold a
  // quote, a newline or a control character other than TAB (DEL too, which JSON leaves
  // unescaped: found by fuzz/fuzz_toml_writer).
  const bool literal_ok = std::none_of(text.begin(), text.end(), [](char ch) {
    return ch == '\'' || ch == '\n' || ch == 0x7f || (ch >= 0 && ch < 0x20 && ch != '\t');
  });
  if (literal_ok) return "'" + text + "'";
  return toml_value(nlohmann::json(text));
}

// The extra lines a replaced row carries over to its successor ("xfail = [...]  # why"), found
// again by what the row compiles (its name may change between runs).
struct Carried {
  std::string display_name;
  std::vector<std::string> lines;
  bool used = false;
};
using CarriedLines = std::map<std::string, Carried>;  // row identity -> its annotation lines

struct Block {
  std::string name;
  std::string target;
  std::vector<std::string> python_path;
  std::string captured;
  std::vector<std::string> captured_as;  // when every row shares it
  std::vector<std::string> autotune;     // likewise
  OrderedFields signature, constants, options;
  std::vector<std::string> kernel_extra;  // carried lines at kernel level
  std::vector<CapturedRow> variants;      // empty for a single row
  std::vector<std::vector<std::string>> variant_extra;
};

void put(std::string& out, const std::string& indent, const std::string& key,
         const std::string& value) {
  out += fmt::format("{}{:<9} = {}\n", indent, key, value);
}

// `autotune = "launch-1"`, or a list when several launches benchmark the row.
std::string autotune_value(const std::vector<std::string>& launches) {
  return launches.size() == 1 ? toml_value(launches.front()) : toml_value(nlohmann::json(launches));
}

std::string render_block(const Block& block) {
  std::string out = "[[kernel]]\n";
  put(out, "", "name", toml_value(block.name));
  put(out, "", "target", toml_value(block.target));
  if (!block.python_path.empty()) {
    nlohmann::json paths = block.python_path;
    put(out, "", "pythonpath", toml_value(paths));
  }
  if (!block.signature.empty()) put(out, "", "signature", inline_table(block.signature));
  if (!block.constants.empty()) put(out, "", "constants", inline_table(block.constants));
  if (!block.options.empty()) put(out, "", "options", inline_table(block.options));
  put(out, "", "captured", toml_value(block.captured));
  if (!block.captured_as.empty())
    put(out, "", "captured_as", toml_value(nlohmann::json(block.captured_as)));
  if (!block.autotune.empty()) put(out, "", "autotune", autotune_value(block.autotune));
  for (const auto& line : block.kernel_extra) out += line + "\n";
  for (std::size_t i = 0; i < block.variants.size(); ++i) {
    const auto& row = block.variants[i];
    out += "\n  [[kernel.variant]]\n";
    // What sets the row apart, in full, where its name had to be shortened (capture_rows.cpp).
    if (!row.variant_in_full.empty()) out += "  # " + row.variant_in_full + "\n";
    put(out, "  ", "name", toml_value(row.variant));
    if (row.specialization) put(out, "  ", "specialization", string_value(*row.specialization));
    if (!row.signature.empty()) put(out, "  ", "signature", inline_table(row.signature));
    if (!row.constants.empty()) put(out, "  ", "constants", inline_table(row.constants));
    if (!row.options.empty()) put(out, "  ", "options", inline_table(row.options));
    put(out, "  ", "captured", toml_value(row.captured));
    if (!row.captured_as.empty())
      put(out, "  ", "captured_as", toml_value(nlohmann::json(row.captured_as)));
    if (!row.autotune.empty()) put(out, "  ", "autotune", autotune_value(row.autotune));
    for (const auto& line : block.variant_extra[i])
      out += "  " + std::string(util::trim(line)) + "\n";
  }
  return out;
}

// Fields every row shares move up to the [[kernel]]; variants keep what sets them apart. A
// [[kernel]] whose own keys form a complete specialisation is a row of its own, so the hoisted
// fields must leave it incomplete: rows that differ only in options keep their signature (their
// constants when there is none) each, or the manifest would gain a row nobody launched.
void hoist_common(Block& block) {
  auto& rows = block.variants;
  if (std::all_of(rows.begin(), rows.end(), [&](const CapturedRow& r) {
        return r.captured_as == rows.front().captured_as;
      })) {
    block.captured_as = rows.front().captured_as;
    for (auto& row : rows) row.captured_as.clear();
  }
  if (std::all_of(rows.begin(), rows.end(),
                  [&](const CapturedRow& r) { return r.autotune == rows.front().autotune; })) {
    block.autotune = rows.front().autotune;
    for (auto& row : rows) row.autotune.clear();
  }
  if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.specialization; })) return;
  const auto shared_by_all = [&](OrderedFields CapturedRow::*field) {
    return std::all_of(rows.begin(), rows.end(),
                       [&](const CapturedRow& r) { return r.*field == rows.front().*field; });
  };
  const bool would_complete =
      shared_by_all(&CapturedRow::signature) && shared_by_all(&CapturedRow::constants);
  const bool keep_signature = would_complete && !rows.front().signature.empty();
  const bool keep_constants = would_complete && !keep_signature;
  const auto hoist = [&](OrderedFields CapturedRow::*field, OrderedFields& into) {
    for (const auto& entry : rows.front().*field) {
      const bool shared = std::all_of(rows.begin(), rows.end(), [&](const CapturedRow& r) {
        const auto& f = r.*field;
        return std::find(f.begin(), f.end(), entry) != f.end();
      });
      if (shared) into.push_back(entry);
    }
    for (auto& row : rows) {
      auto& f = row.*field;
      f.erase(std::remove_if(f.begin(), f.end(),
                             [&](const auto& e) {
                               return std::find(into.begin(), into.end(), e) != into.end();
                             }),
              f.end());
    }
  };
  if (!keep_signature) hoist(&CapturedRow::signature, block.signature);
  if (!keep_constants) hoist(&CapturedRow::constants, block.constants);
  hoist(&CapturedRow::options, block.options);
}

Block make_block(const CapturedKernel& kernel, const std::string& name,
                 const std::vector<CapturedRow>& rows, bool with_python_path,
                 CarriedLines& carried) {
  Block block;
  block.name = name;
  block.target = kernel.target;
  if (with_python_path) block.python_path = kernel.python_path;
  const auto carried_for = [&](const CapturedRow& row) {
    const auto it = carried.find(row.identity());
    if (it == carried.end()) return std::vector<std::string>{};
    it->second.used = true;
    return it->second.lines;
  };
  if (rows.size() == 1 && rows.front().variant.empty()) {
    const auto& row = rows.front();
    block.signature = row.signature;
    block.constants = row.constants;
    block.options = row.options;
    block.captured = row.captured;
    block.captured_as = row.captured_as;
    block.autotune = row.autotune;
    block.kernel_extra = carried_for(row);
    if (row.specialization)
      block.kernel_extra.insert(
          block.kernel_extra.begin(),
          fmt::format("{:<9} = {}", "specialization", string_value(*row.specialization)));
    return block;
  }
  block.captured = fmt::format("{}:{}", kernel.source_file, kernel.source_line);
  block.variants = rows;
  for (const auto& row : rows) block.variant_extra.push_back(carried_for(row));
  hoist_common(block);
  return block;
}

constexpr std::string_view kHeaderStart = "# Captured by `triton-portcheck capture";

std::vector<std::string> header_lines(const std::vector<std::string>& header) {
  std::vector<std::string> out;
  out.reserve(header.size());
  for (const auto& h : header) out.push_back(h.empty() ? "#" : "# " + h);
  return out;
}

// The table headers find_blocks tells apart in a manifest's lines. Scanned by hand: std::regex
// recursed once per character of a line and crashed (SIGSEGV) on a long comment or blank line.
enum class Header { none, kernel, variant, other };

// Blanks (C's isspace()) before each of `words`: `[[ kernel . variant ]]`.
bool take_words(util::TextCursor& c, std::initializer_list<std::string_view> words) {
  return std::all_of(words.begin(), words.end(), [&c](std::string_view word) {
    c.take_blanks();
    return c.take(word);
  });
}

// The rest holds no line break: what std::regex's `.*` matched (it stopped at '\r' too).
bool rest_on_one_line(const util::TextCursor& c) {
  return c.rest().find_first_of("\r\n") == std::string_view::npos;
}

// Blanks, then the end of the line or a comment.
bool at_end_or_comment(util::TextCursor& c) {
  c.take_blanks();
  return c.done() || (c.rest().front() == '#' && rest_on_one_line(c));
}

// `[[kernel]]` and `[[kernel.variant]]` (blanks anywhere between the parts, a comment after), any
// other line whose first non-blank is '[' is another header.
Header header_of(std::string_view line) {
  util::TextCursor kernel(line);
  if (take_words(kernel, {"[[", "kernel", "]]"}) && at_end_or_comment(kernel))
    return Header::kernel;
  util::TextCursor variant(line);
  if (take_words(variant, {"[[", "kernel", ".", "variant", "]]"}) && at_end_or_comment(variant))
    return Header::variant;
  util::TextCursor other(line);
  return take_words(other, {"["}) && rest_on_one_line(other) ? Header::other : Header::none;
}

struct ExistingBlock {
  std::size_t begin = 0, end = 0;  // line range [begin, end)
  std::string name;
  std::string target;
  bool captured = false;
};

// The [[kernel]] blocks of a manifest's text, each with the TOML it parsed to. A block runs to
// the next table header; the comments and blank lines just above that header belong to it.
std::vector<ExistingBlock> find_blocks(const std::vector<std::string>& lines,
                                       const toml::table& root) {
  std::vector<ExistingBlock> blocks;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto header = header_of(lines[i]);
    if (header == Header::kernel) {
      if (!blocks.empty() && blocks.back().end == 0) blocks.back().end = i;
      blocks.push_back({i, 0, "", "", false});
    } else if (header == Header::other && !blocks.empty() && blocks.back().end == 0) {
      blocks.back().end = i;
    }
  }
  if (!blocks.empty() && blocks.back().end == 0) blocks.back().end = lines.size();
  for (auto& block : blocks) {
    while (block.end > block.begin + 1) {
      const auto t = util::trim(lines[block.end - 1]);
      if (!t.empty() && t.front() != '#') break;
      --block.end;
    }
  }
  const auto* kernels = root.get("kernel");
  const auto* array = kernels ? kernels->as_array() : nullptr;
  for (std::size_t i = 0; i < blocks.size() && array && i < array->size(); ++i) {
    const auto* table = array->get(i)->as_table();
    if (table == nullptr) continue;
    blocks[i].name = table->get("name") && table->get("name")->as_string()
                         ? table->get("name")->as_string()->get()
                         : "";
    blocks[i].target = table->get("target") && table->get("target")->as_string()
                           ? table->get("target")->as_string()->get()
                           : "";
    blocks[i].captured = table->contains("captured");
  }
  return blocks;
}

// The lines of one key's value starting at `line` (1-based), until its brackets balance.
std::vector<std::string> key_lines(const std::vector<std::string>& lines, int line) {
  std::vector<std::string> out;
  int depth = 0;
  for (auto i = static_cast<std::size_t>(line - 1); i < lines.size(); ++i) {
    out.push_back(lines[i]);
    bool in_string = false;
    for (char ch : lines[i]) {
      if (ch == '"') in_string = !in_string;
      if (in_string) continue;
      if (ch == '#') break;
      if (ch == '[' || ch == '{') ++depth;
      if (ch == ']' || ch == '}') --depth;
    }
    if (depth <= 0) break;
  }
  return out;
}

CapturedRow row_of(const KernelRow& row) {
  CapturedRow out;
  for (const auto& [k, v] : row.signature.items()) out.signature.emplace_back(k, v);
  for (const auto& [k, v] : row.constants.items()) out.constants.emplace_back(k, v);
  for (const auto& [k, v] : row.options.items()) out.options.emplace_back(k, v);
  if (row.specialization) {
    // The captured JSON is compared as written by capture.
    out.specialization = nlohmann::json::parse(*row.specialization).dump();
  }
  return out;
}

std::string resolved_target(const std::string& target, const std::filesystem::path& dir) {
  const auto colon = target.rfind(':');
  const auto from = target.substr(0, colon);
  if (!from.ends_with(".py")) return target;
  return (std::filesystem::absolute(dir) / from).lexically_normal().string() + target.substr(colon);
}

std::string unique_name(const std::string& wanted, std::set<std::string>& taken) {
  std::string name = wanted;
  for (int n = 2; taken.count(name); ++n) name = fmt::format("{}_{}", wanted, n);
  taken.insert(name);
  return name;
}

}  // namespace

std::string toml_value(const nlohmann::json& value) {
  if (value.is_string()) {
    std::string out = "\"";
    for (unsigned char ch : value.get<std::string>()) {
      switch (ch) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          if (ch < 0x20 || ch == 0x7f)
            out += fmt::format("\\u{:04X}", ch);
          else
            out += static_cast<char>(ch);
      }
    }
    return out + "\"";
  }
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (d != d) return "nan";
    if (d == std::numeric_limits<double>::infinity()) return "inf";
    if (d == -std::numeric_limits<double>::infinity()) return "-inf";
    auto text = fmt::format("{}", d);
    if (text.find_first_of(".eE") == std::string::npos) text += ".0";
    return text;
  }
  if (value.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + toml_value(value[i]);
    return out + "]";
  }
  if (value.is_object()) {
    OrderedFields fields;
    for (const auto& [k, v] : value.items()) fields.emplace_back(k, v);
    return fields.empty() ? "{}" : inline_table(fields);
  }
  throw std::logic_error("toml_value: null has no TOML spelling");
}

MergeResult render_captured_manifest(const std::vector<CapturedKernel>& kernels,
                                     const std::vector<std::string>& header) {
  MergeResult result;
  std::string out;
  for (const auto& line : header_lines(header)) out += line + "\n";
  std::vector<std::string> paths;
  for (const auto& kernel : kernels)
    for (const auto& p : kernel.python_path)
      if (std::find(paths.begin(), paths.end(), p) == paths.end()) paths.push_back(p);
  if (!paths.empty()) {
    out += "\n[defaults]\n";
    nlohmann::json list = paths;
    out += fmt::format("pythonpath = {}  # where the captured modules were imported from\n",
                       toml_value(list));
  }
  std::set<std::string> taken;
  for (const auto& kernel : kernels) {
    CarriedLines none;
    const auto block =
        make_block(kernel, unique_name(kernel.name, taken), kernel.rows, false, none);
    out += '\n';
    out += render_block(block);
    result.rows_written += static_cast<int>(kernel.rows.size());
  }
  result.text = out;
  return result;
}

namespace {

// The manifest a merge edits: its rows as the loader reads them, and its text, line by line and
// cut into [[kernel]] blocks.
struct ExistingManifest {
  Manifest manifest;
  std::filesystem::path dir;  // relative targets and pythonpath entries start here
  std::vector<std::string> lines;
  std::vector<ExistingBlock> blocks;
};

ExistingManifest read_existing(const std::filesystem::path& manifest_file,
                               const std::string& existing_text) {
  ExistingManifest existing{load_manifest(manifest_file), {}, {}, {}};
  toml::table root;
  try {
    root = toml::parse(existing_text, manifest_file.string());
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}:{}: invalid TOML: {}", manifest_file.string(),
                                 e.source().begin.line, e.description()));
  }
  existing.dir = std::filesystem::absolute(manifest_file).parent_path();
  existing.lines = util::split_lines(existing_text);
  existing.blocks = find_blocks(existing.lines, root);
  return existing;
}

// The blocks an --update replaces: captured earlier, for a kernel captured again now.
struct Replacements {
  std::vector<bool> replaced;             // per block of the existing manifest
  std::map<std::string, std::size_t> at;  // resolved target -> first block replaced
  std::set<std::string> names;            // the replaced blocks' kernel names
};

Replacements find_replacements(const ExistingManifest& existing,
                               const std::vector<CapturedKernel>& kernels, MergeMode mode) {
  Replacements out;
  out.replaced.assign(existing.blocks.size(), false);
  if (mode != MergeMode::update) return out;
  std::set<std::string> new_targets;
  for (const auto& k : kernels) new_targets.insert(resolved_target(k.target, existing.dir));
  for (std::size_t i = 0; i < existing.blocks.size(); ++i) {
    const auto& block = existing.blocks[i];
    const auto target = resolved_target(block.target, existing.dir);
    if (!block.captured || !new_targets.count(target)) continue;
    out.replaced[i] = true;
    out.at.emplace(target, i);
    out.names.insert(block.name);
  }
  return out;
}

// The existing rows, sorted: those of replaced blocks leave their annotation lines to carry over
// (counted in rows_replaced); the others stay, and a captured row equal to one is not repeated.
struct ExistingRows {
  CarriedLines carried;
  std::set<std::string> kept_identities;  // "<resolved target>\n<row identity>"
};

ExistingRows sort_existing_rows(const ExistingManifest& existing, const Replacements& replacements,
                                MergeResult& result) {
  ExistingRows out;
  std::set<std::string> with_variants;
  for (const auto& row : existing.manifest.rows)
    if (!row.variant.empty()) with_variants.insert(row.kernel);
  for (const auto& row : existing.manifest.rows) {
    if (!replacements.names.count(row.kernel)) {
      out.kept_identities.insert(row.ref.spelled() + "\n" + row_of(row).identity());
      continue;
    }
    // The [[kernel]] of a captured block with variants holds what they share; no launch made
    // it a row, though older versions of capture could leave its keys complete.
    if (row.variant.empty() && with_variants.count(row.kernel)) continue;
    ++result.rows_replaced;
    Carried entry{row.display_name(), {}, false};
    for (const char* key : {"xfail", "targets", "timeout", "max_rss"}) {
      const auto it = row.key_locations.find(key);
      if (it == row.key_locations.end()) continue;
      for (const auto& l : key_lines(existing.lines, it->second.line)) entry.lines.push_back(l);
    }
    if (!entry.lines.empty()) out.carried[row_of(row).identity()] = std::move(entry);
  }
  return out;
}

// Whether a kernel's import folders are not all on the manifest's pythonpath already.
bool needs_python_path(const CapturedKernel& kernel, const ExistingManifest& existing) {
  const auto& known = existing.manifest.python_path;
  return std::any_of(kernel.python_path.begin(), kernel.python_path.end(), [&](const auto& p) {
    return std::find(known.begin(), known.end(), (existing.dir / p).lexically_normal()) ==
           known.end();
  });
}

// The captured kernels' blocks: the text of each replaced block, and what is appended.
struct NewBlocks {
  std::map<std::size_t, std::string> replacing;  // replaced block index -> new text
  std::string appended;
};

NewBlocks render_new_blocks(const std::vector<CapturedKernel>& kernels,
                            const ExistingManifest& existing, const Replacements& replacements,
                            ExistingRows& rows_before, MergeResult& result) {
  std::set<std::string> taken;
  for (const auto& row : existing.manifest.rows) taken.insert(row.kernel);
  NewBlocks out;
  for (const auto& kernel : kernels) {
    const auto target = resolved_target(kernel.target, existing.dir);
    // Rows already in the manifest are left out; the rest are named among themselves.
    CapturedKernel remaining = kernel;
    remaining.rows.clear();
    for (const auto& row : kernel.rows) {
      if (rows_before.kept_identities.count(target + "\n" + row.identity()))
        ++result.rows_existing;
      else
        remaining.rows.push_back(row);
    }
    if (remaining.rows.empty()) continue;
    const auto at = replacements.at.find(target);
    const bool replacing = at != replacements.at.end();
    const std::string name =
        replacing ? existing.blocks[at->second].name : unique_name(kernel.name, taken);
    if (remaining.rows.size() != kernel.rows.size()) name_rows(remaining);
    const auto block = make_block(remaining, name, remaining.rows,
                                  needs_python_path(kernel, existing), rows_before.carried);
    result.rows_written += static_cast<int>(remaining.rows.size());
    if (replacing) {
      out.replacing[at->second] = render_block(block);
    } else {
      out.appended += '\n';
      out.appended += render_block(block);
    }
  }
  return out;
}

// The existing text with each replaced block swapped for its new text (or removed), then the
// appended blocks.
std::string splice(ExistingManifest& existing, const Replacements& replacements,
                   const NewBlocks& blocks) {
  const auto& lines = existing.lines;
  std::string out;
  for (std::size_t i = 0; i < lines.size();) {
    const auto b = std::find_if(existing.blocks.begin(), existing.blocks.end(),
                                [&](const ExistingBlock& x) { return x.begin == i; });
    const auto index = static_cast<std::size_t>(b - existing.blocks.begin());
    if (b == existing.blocks.end() || !replacements.replaced[index]) {
      out += lines[i] + "\n";
      ++i;
      continue;
    }
    if (const auto t = blocks.replacing.find(index); t != blocks.replacing.end()) {
      out += t->second;
    } else if (out.ends_with("\n\n") || out.empty()) {
      // A block removed outright leaves one blank line between its neighbours, not two.
      while (b->end < lines.size() && util::trim(lines[b->end]).empty()) ++b->end;
    }
    i = b->end;
  }
  while (out.ends_with("\n\n")) out.pop_back();
  return out + blocks.appended;
}

// Annotations of a replaced row that no captured row took over: --update removed them.
void warn_unused(const CarriedLines& carried, MergeResult& result) {
  for (const auto& [identity, entry] : carried) {
    if (entry.used) continue;
    std::vector<std::string> trimmed;
    for (const auto& l : entry.lines) trimmed.emplace_back(util::trim(l));
    result.warnings.push_back(
        fmt::format("{} was captured before but not in this run, so --update removed it and its {}",
                    entry.display_name, util::join(trimmed, " ")));
  }
}

// CRLF stays CRLF.
std::string with_line_ends_of(const std::string& existing_text, std::string text) {
  if (existing_text.find("\r\n") == std::string::npos) return text;
  std::string crlf;
  for (char ch : text) {
    if (ch == '\n') crlf += '\r';
    crlf += ch;
  }
  return crlf;
}

}  // namespace

MergeResult merge_captured_manifest(const std::filesystem::path& manifest_file,
                                    const std::string& existing_text,
                                    const std::vector<CapturedKernel>& kernels, MergeMode mode,
                                    const std::vector<std::string>& header) {
  auto existing = read_existing(manifest_file, existing_text);
  // After an --update the rows come from this run's command; after an --append from several.
  auto& lines = existing.lines;
  if (mode == MergeMode::update && !header.empty() && !lines.empty() &&
      lines.front().starts_with(kHeaderStart))
    lines.front() = header_lines(header).front();

  MergeResult result;
  const auto replacements = find_replacements(existing, kernels, mode);
  auto rows_before = sort_existing_rows(existing, replacements, result);
  const auto blocks = render_new_blocks(kernels, existing, replacements, rows_before, result);
  result.text = with_line_ends_of(existing_text, splice(existing, replacements, blocks));
  warn_unused(rows_before.carried, result);
  return result;
}

}  // namespace portcheck
