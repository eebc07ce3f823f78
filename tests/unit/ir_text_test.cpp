#include "src/core/ir_text.hpp"

#include <gtest/gtest.h>

#include "util/text_diff.hpp"

namespace portcheck {
namespace {

TEST(NormalizeIr, SsaRenumberingOnlyIsEqual) {
  const std::string a =
      "#loc = loc(\"/home/a/kernels.py\":10:0)\n"
      "tt.func public @axpy(%arg0: !tt.ptr<f32> loc(\"/home/a/kernels.py\":10:0), %arg1: i32) {\n"
      "  %c0_i32 = arith.constant 0 : i32 loc(#loc1)\n"
      "  %cst_0 = arith.constant dense<1.0> : tensor<128xf32> loc(#loc2)\n"
      "  %12 = tt.load %arg0 : !tt.ptr<f32> loc(callsite(#loc3 at #loc4))\n"
      "  cf.br ^bb3(%12 : f32)\n"
      "} loc(#loc)\n"
      "#loc1 = loc(\"/home/a/kernels.py\":12:5)\n";
  const std::string b =
      "#loc = loc(\"/tmp/other/kernels.py\":11:0)\n"
      "tt.func public @axpy(%arg3: !tt.ptr<f32> loc(\"/tmp/other/kernels.py\":11:0), %arg1: i32) "
      "{\n"
      "  %c0_i32_7 = arith.constant 0 : i32 loc(#loc9)\n"
      "  %cst_4 = arith.constant dense<1.0> : tensor<128xf32> loc(#loc8)\n"
      "  %40 = tt.load %arg3 : !tt.ptr<f32> loc(callsite(#loc5 at #loc6))   \n"
      "  cf.br ^bb7(%40 : f32)\n"
      "} loc(#loc)\n"
      "#loc1 = loc(\"/tmp/other/kernels.py\":13:5)\n";
  EXPECT_NE(a, b);
  EXPECT_EQ(normalize_ir(a), normalize_ir(b));
  EXPECT_EQ(util::unified_diff(normalize_ir(a), normalize_ir(b), "a", "b"), "");
  EXPECT_EQ(normalize_ir("  %12 = tt.load %arg0 loc(#loc3)\n"), "  %N = tt.load %N\n");
}

TEST(NormalizeIr, RealChangesRemain) {
  const auto a = normalize_ir("  %5 = arith.addf %3, %4 : f32\n");
  const auto b = normalize_ir("  %5 = arith.mulf %3, %4 : f32\n");
  EXPECT_NE(a, b);
  // Constants keep their values; register names of other kinds stay.
  EXPECT_NE(normalize_ir("%c0_i32 = arith.constant 0 : i32\n"),
            normalize_ir("%c1_i32 = arith.constant 1 : i32\n"));
  EXPECT_EQ(normalize_ir("mov.u32 %r1, %tid.x;\n"), "mov.u32 %N, %tid.x;\n");
  EXPECT_EQ(normalize_ir("%cst_0 %cst %c0_i32_7 %c0_i32 %0#1 %true\n"),
            "%cst %cst %c0_i32 %c0_i32 %N %true\n");
  // Where they are used, two constants keep their own names (issue 51).
  EXPECT_NE(normalize_ir("arith.addi %x, %c32_i32 : i32\n"),
            normalize_ir("arith.addi %x, %c64_i32 : i32\n"));
  EXPECT_EQ(normalize_ir("%c64_i32_3 %c16 %c16_5\n"), "%c64_i32 %c16 %c16\n");
  EXPECT_EQ(normalize_ir("v_add_f32 v1, v2, v3\n"), "v_add_f32 v1, v2, v3\n");
}

TEST(NormalizeIr, HashesAddressesPathsAndDebugInfo) {
  EXPECT_EQ(normalize_ir("; ModuleID = 'LLVMDialectModule' at 0x7f3a2c001234\n"),
            "; ModuleID = 'LLVMDialectModule' at 0x?\n");
  EXPECT_EQ(normalize_ir("float 0x3FF0000000000000\n"), "float 0x3FF0000000000000\n");
  EXPECT_EQ(normalize_ir("kernel_0123456789abcdef0123456789abcdef\n"), "kernel_<hash>\n");
  EXPECT_EQ(normalize_ir(".file 1 \"/tmp/tmpab3x_9z/kernels.py\"\n"),
            ".file 1 \"<path>/kernels.py\"\n");
  EXPECT_EQ(normalize_ir("ptxas /tmp/tmpab3x_9z.ptx\n"), "ptxas <tmpfile>\n");
  EXPECT_EQ(normalize_ir("  .loc 1 12 5\n  ld.global.b32 {%r1}, [%rd2];\n"),
            "  ld.global.b32 {%N}, [%N];\n");
  EXPECT_EQ(
      normalize_ir("  %7 = fadd float %5, %6, !dbg !12\n!12 = !DILocation(line: 3, scope: !4)\n"),
      "  %N = fadd float %N, %N\n");
  EXPECT_EQ(normalize_ir("$L__BB0_2:\n.LBB1_3:\n12:\n"), "$L__BBN:\n.LBBN:\nN:\n");
  EXPECT_EQ(normalize_ir("a\r\nb"), "a\nb\n");
}

// The two path syntaxes differ only where a path runs into IR punctuation; each caller keeps its
// own (classify's fingerprints are stored, so its rule cannot move).
TEST(NormalizePaths, FileNameKeptTemporaryFilesHidden) {
  for (const auto syntax : {PathSyntax::message, PathSyntax::ir}) {
    EXPECT_EQ(normalize_paths("/home/me/demo/kernels.py:93:9: error", syntax),
              "<path>/kernels.py:93:9: error");
    EXPECT_EQ(normalize_paths("ptxas /tmp/tmpab3x_9z.ptx, line 3", syntax),
              "ptxas <tmpfile>, line 3");
    EXPECT_EQ(normalize_paths("no path at all: a/b", syntax), "no path at all: a/b");
  }
  EXPECT_EQ(normalize_paths("#di_file<\"k.py\" in /home/me/demo>", PathSyntax::ir),
            "#di_file<\"k.py\" in <path>/demo>");
  EXPECT_EQ(normalize_paths("/a/b[1]/c.py", PathSyntax::ir), "<path>/b[1]/c.py");
  EXPECT_EQ(normalize_paths("/a/b[1]/c.py", PathSyntax::message), "<path>/c.py");
}

TEST(WithoutValueNames, RenamesVanishAndRealChangesRemain) {
  // 3.8.0 and 3.9.0 name the same constant after different source variables.
  EXPECT_EQ(without_value_names("%N_i32 = arith.constant 32 : i32\n"),
            without_value_names("%rows = arith.constant 32 : i32\n"));
  EXPECT_EQ(without_value_names("%0#1 = tt.foo %arg0, %tid.x\n"), "% = tt.foo %, %\n");
  EXPECT_NE(without_value_names("%a = arith.constant 32 : i32\n"),
            without_value_names("%a = arith.constant 64 : i32\n"));
}

}  // namespace
}  // namespace portcheck
