// Classification and fingerprints, on messages captured from real Triton compiles
// (tests/unit/data/*.result.json and *.stderr, written by the worker: Triton 3.9.0 for demo cells,
// 3.6.0 where a name ends in _t360).
#include "src/check/classify.hpp"
#include "src/check/compiler_messages.hpp"
#include "src/check/fork_hazard.hpp"

#include <csignal>
#include <regex>

#include <gtest/gtest.h>

#include "src/run/cell_answer_read.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

const std::filesystem::path kData = PORTCHECK_TEST_DATA;

CellEvidence captured(const std::string& name) {
  CellEvidence e;
  e.outcome.how = Termination::exited;
  e.result = read_cell_answer(
      "compile_result", nlohmann::json::parse(util::read_file(kData / (name + ".result.json"))));
  e.stderr_text = util::read_file(kData / (name + ".stderr"));
  e.last_stage = e.result->stage;
  return e;
}

// The same evidence as if produced on another machine, from another checkout and temp dir.
CellEvidence moved(CellEvidence e) {
  const auto relocate = [](std::string s) {
    s = std::regex_replace(s, std::regex("/work/main/demo"), "/home/alice/src/my-kernels");
    s = std::regex_replace(s, std::regex("/tmp/tmp[a-z0-9_]+"), "/var/tmp/tmpQQQQ1234");
    s = std::regex_replace(s, std::regex("line (\\d+);"), "line 9$1;");
    return s;
  };
  e.stderr_text = relocate(e.stderr_text);
  e.result->error->message = relocate(e.result->error->message);
  return e;
}

TEST(Classify, FrontendLibdeviceGapOnHip) {
  const auto c = classify(captured("gamma_ratio_gfx942"));
  EXPECT_EQ(c.kind, FailureKind::frontend_error);
  EXPECT_EQ(c.stage, "frontend");
  EXPECT_EQ(
      c.message,
      "AttributeError: module 'triton.language.extra.hip.libdevice' has no attribute 'tgamma'");
  ASSERT_TRUE(c.error_source.has_value());
  EXPECT_EQ(c.error_source->line, 32);  // the tl.store line in demo/kernels.py
}

TEST(Classify, FrontendFp8Unsupported) {
  const auto c = classify(captured("quantize_fp8_cuda75"));
  EXPECT_EQ(c.kind, FailureKind::frontend_error);
  EXPECT_NE(c.message.find("ValueError: type fp8e4nv not supported in this architecture"),
            std::string::npos);
}

TEST(Classify, PtxasErrorIsAssemblerError) {
  const auto c = classify(captured("scatter_rows_cuda90"));
  EXPECT_EQ(c.kind, FailureKind::assembler_error);
  EXPECT_EQ(c.stage, "cubin");
  EXPECT_EQ(c.message,
            "ptxas-blackwell: Feature '.tile::scatter4' not supported on .target 'sm_90a'");
}

// Triton 3.6.0, hip:gfx1250, a kernel of 16 pointers (wide_args): the exception is LLD's wrapper
// ("... because " and nothing), the cause is the assembler's line before the linker's.
TEST(Classify, AssemblerCauseNotTheLinkersWrapper) {
  const auto c = classify(captured("wide_args_gfx1250_t360"));
  EXPECT_EQ(c.kind, FailureKind::assembler_error);
  EXPECT_EQ(c.stage, "hsaco");
  EXPECT_EQ(c.message, "amdgpu_user_sgpr_count smaller than than implied by enabled user SGPRs");
  EXPECT_EQ(c.fingerprint, classify(moved(captured("wide_args_gfx1250_t360"))).fingerprint);
}

// Triton 3.9.0, hip:gfx942, inline asm the AMD assembler rejects: the exception says only
// "AMD assembler rejected generated AMDGCN"; the assembler's line says what.
TEST(Classify, AmdAssemblerLineNotTritonsSummary) {
  const auto c = classify(captured("inline_asm_gfx942"));
  EXPECT_EQ(c.kind, FailureKind::assembler_error);
  EXPECT_EQ(c.stage, "hsaco");
  EXPECT_EQ(c.message, "triton-amdgpu-assembler: invalid instruction");
  EXPECT_FALSE(c.error_source && c.error_source->file == "triton-amdgpu-assembler");
}

// Every form of backend error line, and the first one wins: the cause is printed before what it
// caused.
TEST(CompilerMessages, FirstBackendErrorInPrintedOrder) {
  EXPECT_EQ(first_backend_error("note: x\nerror: A\nld.lld: error: B\n"), "A");
  EXPECT_EQ(first_backend_error("ld.lld: error: target emulation unknown\n"),
            "ld.lld: target emulation unknown");
  EXPECT_EQ(first_backend_error("LLVM ERROR: Cannot select: t1\nerror: later\n"),
            "LLVM ERROR: Cannot select: t1");
  EXPECT_EQ(first_backend_error("<inline asm>:1:2: error: bad operand\n"), "bad operand");
  EXPECT_EQ(first_backend_error("/tmp/x/buf.s:9:1: error: too many\n"), "buf.s: too many");
  EXPECT_EQ(first_backend_error("a user print: error: looks like one\n"), std::nullopt);
  EXPECT_EQ(first_backend_error("warning: only a warning\n"), std::nullopt);
}

TEST(Classify, MlirPassFailureNamesThePassAndTheLine) {
  const auto c = classify(captured("dot_int8_cuda75"));
  EXPECT_EQ(c.kind, FailureKind::mlir_error);
  EXPECT_EQ(c.stage, "ttgir");
  EXPECT_EQ(c.pass, "TritonGPUAccelerateMatmul");
  EXPECT_TRUE(c.message.starts_with("'arith.extf' op operand #0 must be floating-point-like"))
      << c.message;
  ASSERT_TRUE(c.error_source.has_value());
  EXPECT_EQ(c.error_source->line, 93);
}

TEST(Classify, ApiRemovalIsFrontend) {
  const auto c = classify(captured("blockptr_cuda90"));
  EXPECT_EQ(c.kind, FailureKind::frontend_error);
  EXPECT_EQ(c.message, "Block pointers have been removed in favor of the tensor descriptor API");
}

TEST(Fingerprint, StableAcrossPathsTempFilesAndMachines) {
  for (const auto* name : {"gamma_ratio_gfx942", "quantize_fp8_cuda75", "scatter_rows_cuda90",
                           "dot_int8_cuda75", "blockptr_cuda90"}) {
    const auto here = classify(captured(name));
    const auto there = classify(moved(captured(name)));
    EXPECT_EQ(here.fingerprint, there.fingerprint) << name;
    EXPECT_EQ(here.fingerprint.size(), 12u);
  }
}

TEST(Fingerprint, SameFailureOnTwoArchitecturesGroupsTogether) {
  EXPECT_EQ(classify(captured("scatter_rows_cuda90")).fingerprint,
            classify(captured("scatter_rows_cuda120")).fingerprint);
}

TEST(Fingerprint, DifferentFailuresDiffer) {
  std::set<std::string> seen;
  for (const auto* name : {"gamma_ratio_gfx942", "quantize_fp8_cuda75", "scatter_rows_cuda90",
                           "dot_int8_cuda75", "blockptr_cuda90"})
    EXPECT_TRUE(seen.insert(classify(captured(name)).fingerprint).second) << name;
}

TEST(Normalize, ReplacesWhatVariesAndKeepsWhatMatters) {
  EXPECT_EQ(normalize_message("%arg12 and %23 at /tmp/tmpab12cd.ptx:45:7"),
            "%N and %N at <tmpfile>:L:C");
  EXPECT_EQ(normalize_message("loc(#loc3) 0xdeadbeef"), "loc(?) 0x?");
  EXPECT_EQ(normalize_message("needs  sm_90a\n and gfx942"), "needs sm_N and gfxN");
  EXPECT_EQ(normalize_message("fp8e4nv not supported"), "fp8e4nv not supported");
}

TEST(Classify, ProcessOutcomes) {
  CellEvidence e;
  e.last_stage = "llir";
  e.outcome.how = Termination::signaled;
  e.outcome.signal = SIGSEGV;
  e.stderr_text = "Stack dump:\nLLVM ERROR: Cannot select: intrinsic %llvm.foo\n";
  auto c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::crash);
  EXPECT_EQ(c.stage, "llir");
  EXPECT_NE(c.message.find("SIGSEGV"), std::string::npos);
  EXPECT_NE(c.message.find("LLVM ERROR: Cannot select"), std::string::npos);

  e.outcome.how = Termination::timed_out;
  c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::timeout);
  EXPECT_EQ(c.stage, "llir");

  e.outcome.how = Termination::out_of_memory;
  EXPECT_EQ(classify(e).kind, FailureKind::oom);

  e.outcome.how = Termination::exited;
  e.outcome.exit_code = 1;
  e.stderr_text = "Traceback (most recent call last):\nKeyError: 'signature'\n";
  c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::internal_error);
  EXPECT_NE(c.message.find("KeyError: 'signature'"), std::string::npos);
}

TEST(Classify, ImportErrorIsTheUsersModule) {
  CellEvidence e;
  e.outcome.how = Termination::exited;
  e.result = CellAnswer{};
  e.result->stage = "import";
  e.result->error =
      FailureError{"import", "importing x.py failed: NameError: name 'q' is not defined", ""};
  const auto c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::import_error);
  EXPECT_EQ(c.stage, "import");
}

// A module that kills its process while being imported (a segfault in an extension it loads,
// os._exit) is the user's module failing to import, not a compiler crash nor a bug of ours.
TEST(Classify, DeathWhileImportingIsAnImportError) {
  CellEvidence e;
  e.last_stage = "import";
  e.outcome.how = Termination::signaled;
  e.outcome.signal = SIGSEGV;
  auto c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::import_error);
  EXPECT_EQ(c.stage, "import");
  EXPECT_NE(c.message.find("SIGSEGV"), std::string::npos) << c.message;

  e.outcome.how = Termination::exited;
  e.outcome.exit_code = 0;
  c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::import_error);
  EXPECT_NE(c.message.find("exited with status 0"), std::string::npos) << c.message;

  e.outcome.how = Termination::timed_out;
  EXPECT_EQ(classify(e).kind, FailureKind::timeout);
  e.outcome.how = Termination::out_of_memory;
  EXPECT_EQ(classify(e).kind, FailureKind::oom);
}

TEST(Classify, OkResultIsNoFailure) {
  CellEvidence e;
  e.outcome.how = Termination::exited;
  e.result = CellAnswer{};
  e.result->ok = true;
  EXPECT_EQ(classify(e).kind, FailureKind::none);
}

TEST(Progress, LastStageWins) {
  EXPECT_EQ(last_stage_from_progress("stage import\nstage frontend\nstage ttir\n"), "ttir");
  EXPECT_EQ(last_stage_from_progress(""), "");
}

}  // namespace
}  // namespace portcheck

namespace portcheck {
namespace {

TEST(Normalize, LayoutAttributesKeepOnlyTheirNames) {
  EXPECT_EQ(
      normalize_message(
          "got 'tensor<32x32xi8, #ttg.dot_op<{opIdx = 0, parent = #ttg.blocked<{sizePerThread = "
          "[2, 2], threadsPerWarp = [2, 16]}>}>>'"),
      "got 'tensor<32x32xi8, #ttg.dot_op<(layout)>>'");
}

}  // namespace
}  // namespace portcheck

namespace portcheck {
namespace {

// Issue 14, item 6: os._exit(0) in the kernel's code during the compile, or LLVM's
// report_fatal_error (exit 1), was an internal error "a bug of triton-portcheck".
TEST(Classify, ExitWithoutResultInACompileStageIsACrashNotOurs) {
  CellEvidence e;
  e.outcome.how = Termination::exited;
  e.outcome.exit_code = 0;
  e.last_stage = "frontend";
  auto c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::crash);
  EXPECT_EQ(c.stage, "frontend");
  EXPECT_NE(c.message.find("exited with status 0 in stage frontend"), std::string::npos)
      << c.message;

  e.outcome.exit_code = 1;
  e.last_stage = "llir";
  e.stderr_text = "LLVM ERROR: PTX version 8.8 does not support target 'sm_88'.\n";
  c = classify(e);
  EXPECT_EQ(c.kind, FailureKind::crash);
  EXPECT_NE(c.message.find("LLVM ERROR: PTX version 8.8"), std::string::npos) << c.message;

  // Our own code before the import or after the compile: still ours.
  e.stderr_text.clear();
  for (const char* ours : {"", "start", "inspect"}) {
    e.last_stage = ours;
    EXPECT_EQ(classify(e).kind, FailureKind::internal_error) << ours;
  }
}

// The fingerprint rules were std::regex; the scanners that replaced them must match what the
// regexes matched, word boundaries and backtracking included (expected values: the regex version).
TEST(Fingerprint, NormalizeMessageEdgesMatchTheFormerRegexes) {
  const std::pair<const char*, const char*> cases[] = {
      {"sm_90a sm_90ab sm_80_ (sm_100f)", "sm_N sm_90ab sm_80_ (sm_N)"},
      {"gfx90a gfx11001 gfx942A gfx1100", "gfxN gfx11001 gfx942A gfxN"},
      {"cuda:80a cuda:90 xcuda:80", "cuda:80a cuda:N xcuda:80"},
      {"%arg12#3 %12# %_ %x7", "%N %N# %_ %N"},
      {"loc(a b) loc( #loc12 #locx", "loc(?) loc( #loc #locx"},
      {"0xZ 0x1fG at 3:4: at 3:4 line 7 inline 7", "0xZ 0x?G at L:C: at 3:4 line N inline 7"},
      {"<{a <{b}> c}> <{d}>x \t\n  end", "<(layout)> <(layout)>x end"},
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(normalize_message(in), out) << in;
}

}  // namespace
}  // namespace portcheck

// Which failures of a cell forked from a threaded zygote are run again in a fresh process.
TEST(ForkHazard, ExplainsWhatTheCompilerDidNotSay) {
  const auto verdict = [](portcheck::FailureKind kind, std::string message = "") {
    portcheck::Classification c;
    c.kind = kind;
    c.message = std::move(message);
    return c;
  };
  using portcheck::FailureKind;
  portcheck::ProcessOutcome outcome;
  const auto explains = [&](const portcheck::Classification& c) {
    return portcheck::fork_hazard_could_explain(c, outcome);
  };
  for (const auto kind : {FailureKind::crash, FailureKind::oom, FailureKind::import_error,
                          FailureKind::internal_error})
    EXPECT_TRUE(explains(verdict(kind)));
  for (const auto kind : {FailureKind::none, FailureKind::mlir_error, FailureKind::llvm_error,
                          FailureKind::assembler_error, FailureKind::launch_limit})
    EXPECT_FALSE(explains(verdict(kind)));
  EXPECT_FALSE(
      explains(verdict(FailureKind::frontend_error, "ValueError: type fp8e4nv not supported")));
  EXPECT_TRUE(
      explains(verdict(FailureKind::frontend_error,
                       "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
                       "with multiprocessing, you must use the 'spawn' start method")));
  // A timeout only when the cell was waiting (a lock held since the fork), not computing.
  outcome.how = portcheck::Termination::timed_out;
  EXPECT_FALSE(explains(verdict(FailureKind::timeout)));
  outcome.stalled = true;
  EXPECT_TRUE(explains(verdict(FailureKind::timeout)));
}
