#include "src/report/repro.hpp"

#include <string>

#include <gtest/gtest.h>

#include "src/report/markdown.hpp"
#include "tests/unit/report_fixtures.hpp"

namespace portcheck {
namespace {

CellResult failing(const std::string& row, const std::string& target,
                   FailureKind kind = FailureKind::frontend_error) {
  return test_support::cell(row, target, kind, "aaaaaaaaaaaa", "boom", "frontend");
}

TEST(ReproCommand, NamesTheRowTargetAndHowTheRunFoundItsManifest) {
  const auto gamma = failing("gamma_ratio", "hip:gfx942");
  EXPECT_EQ(repro_command(gamma, "--demo"),
            "triton-portcheck repro gamma_ratio -t hip:gfx942 --demo");
  // The default manifest (what `repro` reads without --manifest), or none recorded: no flag.
  EXPECT_EQ(repro_command(gamma, "portcheck.toml"),
            "triton-portcheck repro gamma_ratio -t hip:gfx942");
  EXPECT_EQ(repro_command(gamma, "./portcheck.toml"),
            "triton-portcheck repro gamma_ratio -t hip:gfx942");
  EXPECT_EQ(repro_command(gamma, ""), "triton-portcheck repro gamma_ratio -t hip:gfx942");
  EXPECT_EQ(repro_command(gamma, "ci/portcheck.toml"),
            "triton-portcheck repro gamma_ratio -t hip:gfx942 --manifest ci/portcheck.toml");
  auto older = gamma;
  older.triton = "3.2.0";
  older.kernel = "gamma_ratio · triton 3.2.0";  // as one_row_per_version shows it
  EXPECT_EQ(repro_command(older, "--demo"),
            "triton-portcheck repro gamma_ratio -t hip:gfx942 --triton 3.2.0 --demo");
}

TEST(ReproCommand, QuotesWordsTheShellWouldReadOtherwise) {
  auto dot = failing("dot_small", "cuda:80", FailureKind::mlir_error);
  dot.variant = "int8";
  EXPECT_EQ(
      repro_command(dot, "my kernels/it's.toml"),
      "triton-portcheck repro 'dot_small[int8]' -t cuda:80 --manifest 'my kernels/it'\\''s.toml'");
  const auto hostile = failing("k$(touch x)`id`;'", "cuda:80");
  EXPECT_EQ(repro_command(hostile, ""),
            "triton-portcheck repro 'k$(touch x)`id`;'\\''' -t cuda:80");
}

TEST(ReproCommand, OnlyForKindsThatCompiled) {
  for (const auto kind :
       {FailureKind::frontend_error, FailureKind::mlir_error, FailureKind::llvm_error,
        FailureKind::assembler_error, FailureKind::timeout, FailureKind::crash, FailureKind::oom,
        FailureKind::launch_limit})
    EXPECT_NE(repro_command(failing("k", "cuda:80", kind), ""), "") << to_string(kind);
  for (const auto kind : {FailureKind::none, FailureKind::import_error, FailureKind::internal_error,
                          FailureKind::predicted, FailureKind::unsupported_target})
    EXPECT_EQ(repro_command(failing("k", "cuda:80", kind), ""), "") << to_string(kind);
}

TEST(ReproCommand, MarkdownGivesOneLinePerFailureGroup) {
  auto r = test_support::sample_report();
  r.manifest = "--demo";
  const auto md = render_markdown(r);
  EXPECT_NE(md.find("  *repro:* `triton-portcheck repro gamma_ratio -t hip:gfx942 --demo`\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("  *repro:* `triton-portcheck repro 'dot_small[int8]' -t cuda:80 --demo`\n"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace portcheck
