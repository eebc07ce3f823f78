#pragma once
// What the report tests share: a cell as they build them, and the report every format is tested
// on, so that a new CellResult or Report field is filled in one place. Each test adds to the
// sample what its format shows (a host, a link, source locations, more rows).
#include <stdexcept>
#include <string>

#include "src/core/cell.hpp"
#include "src/core/report.hpp"

namespace portcheck::test_support {

inline CellResult cell(const std::string& kernel, const std::string& target,
                       FailureKind kind = FailureKind::none, const std::string& fp = "",
                       const std::string& message = "", const std::string& stage = "") {
  CellResult c;
  c.kernel = c.base_kernel = kernel;
  c.target = target;
  c.triton = "current";
  c.triton_version = "3.9.0";
  c.kind = kind;
  c.status = kind == FailureKind::none ? Status::ok : Status::failed;
  c.is_new = kind != FailureKind::none;
  c.fingerprint = fp;
  c.message = message;
  c.stage = stage;
  c.compile_s = 0.25;
  return c;
}

// How a test makes its cells: `cell`, or a wrapper that adds what its format shows (the HTML
// test gives every cell stage times and a log).
using CellMaker = CellResult (*)(const std::string& kernel, const std::string& target,
                                 FailureKind kind, const std::string& fp,
                                 const std::string& message, const std::string& stage);

inline constexpr const char* kTgammaMessage =
    "AttributeError: module 'triton.language.extra.hip.libdevice' has no attribute 'tgamma'";
inline constexpr const char* kExtfMessage =
    "'arith.extf' op operand #0 must be floating-point-like";

// dot_small[int8] failing in TritonGPUAccelerateMatmul (fingerprint bbbbbbbbbbbb), a slow compile.
inline CellResult extf_failure(const std::string& target, CellMaker make = cell,
                               const std::string& message = kExtfMessage) {
  auto c =
      make("dot_small[int8]", target, FailureKind::mlir_error, "bbbbbbbbbbbb", message, "ttgir");
  c.pass = "TritonGPUAccelerateMatmul";
  c.compile_s = 1.5;
  return c;
}

// The same failure where the manifest expects it (xfail); it names no pass.
inline CellResult expected_extf_failure(const std::string& target, CellMaker make = cell,
                                        const std::string& message = kExtfMessage) {
  auto c =
      make("dot_small[int8]", target, FailureKind::mlir_error, "bbbbbbbbbbbb", message, "ttgir");
  c.status = Status::xfail;
  c.is_new = false;
  return c;
}

inline CellResult passed_unexpectedly(CellResult c) {
  c.status = Status::xpass;
  return c;
}

struct SampleOptions {
  CellMaker make = cell;
  std::string extf_message = kExtfMessage;
};

// Three targets (cuda:80, cuda:90, hip:gfx942) by three rows, each kind of cell and two failure
// groups: axpy passes everywhere; gamma_ratio fails in the frontend on HIP (group A, with a why);
// dot_small[int8] fails in ttgir on cuda:80 (group B), is expected to fail so on cuda:90, and
// passes unexpectedly on hip:gfx942.
inline Report sample_report(const SampleOptions& options = {}) {
  const auto make = options.make;
  Report r;
  r.tool_version = "0.1.0";
  r.environment = {{"triton", {{"version", "3.9.0"}}}, {"python", {{"version", "3.11.7"}}}};
  r.targets = {"cuda:80", "cuda:90", "hip:gfx942"};
  r.rows = {"axpy", "gamma_ratio", "dot_small[int8]"};
  r.wall_s = 12.5;
  for (const auto& t : r.targets) r.cells.push_back(make("axpy", t, FailureKind::none, "", "", ""));
  r.cells.push_back(make("gamma_ratio", "cuda:80", FailureKind::none, "", "", ""));
  r.cells.push_back(make("gamma_ratio", "cuda:90", FailureKind::none, "", "", ""));
  auto gamma = make("gamma_ratio", "hip:gfx942", FailureKind::frontend_error, "aaaaaaaaaaaa",
                    kTgammaMessage, "frontend");
  gamma.why = "HIP's libdevice has no tgamma.";
  r.cells.push_back(gamma);
  r.cells.push_back(extf_failure("cuda:80", make, options.extf_message));
  r.cells.push_back(expected_extf_failure("cuda:90", make, options.extf_message));
  r.cells.push_back(
      passed_unexpectedly(make("dot_small[int8]", "hip:gfx942", FailureKind::none, "", "", "")));
  return r;
}

// As a CI runner's report has them: the host and the start time (JUnit and SARIF write both).
inline void on_ci_runner(Report& r) {
  r.environment["host"] = "runner-7";
  r.environment["started"] = "2026-11-30T01:20:00Z";
}

// The cell of `row` on `target`.
inline CellResult& cell_at(Report& r, const std::string& row, const std::string& target) {
  for (auto& c : r.cells)
    if (c.kernel == row && c.target == target) return c;
  throw std::logic_error("the sample has no cell " + row + " on " + target);
}

}  // namespace portcheck::test_support
