// Result-cache entries, local or from a shared store (issue 28): anyone who can write to a store
// can seal an entry, so the harness seals what it is given itself (the checksum then holds and
// only the content decides). An entry is refused with a reason or accepted; an accepted one is
// turned into a verdict exactly as a cache hit is, and nothing on the way throws or crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/check/cell_cache.hpp"
#include "src/check/interpret.hpp"
#include "src/run/result_cache.hpp"
#include "util/bounded_json.hpp"

namespace {

constexpr const char* kKey = "0123456789abcdef";

void judge(const std::string& text) {
  std::string problem;
  const auto entry = portcheck::ResultCache::check_entry(text, kKey, &problem);
  if (!entry) return;
  if (!problem.empty()) std::abort();  // accepted, yet with a reason to refuse
  static const portcheck::KernelRow row{.kernel = "k", .variant = "v"};
  portcheck::PlannedCell cell;
  cell.row = &row;
  cell.target = *portcheck::parse_target("cuda:90");
  cell.label = "current";
  portcheck::CellInput input;
  input.evidence = portcheck::evidence_from_cache(*entry, "/origin");
  input.cached = true;
  portcheck::Judgement judgement;
  judgement.triton_version = "3.6.0";
  (void)portcheck::interpret(cell, input, judgement);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  judge(text);  // as stored: the parser, the schema version and the checksum decide first
  try {
    auto entry = util::parse_json_bounded(text);
    if (!entry.is_object()) return 0;
    entry["key"] = kKey;
    judge(portcheck::ResultCache::seal(entry));  // sealed: only the content decides
  } catch (const util::JsonInputError&) {
  }
  return 0;
}
