// check/reproducer: the header a `repro` file carries, and a run of such a file judged as a cell.
// The "python" here is /bin/sh running a shell script that plays a reproducer's part (writes the
// --result file, the --progress stages), so the judging is tested without Triton; the real files
// are run by tests/integration/test_repro.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "src/check/reproducer.hpp"
#include "src/core/errors.hpp"
#include "src/core/tool_files.hpp"
#include "util/fs.hpp"

namespace portcheck {
namespace {

constexpr const char* kHeader =
    R"(# portcheck-repro: {"fingerprint": "abc123abc123", "kind": "frontend-error", )"
    R"("stage": "frontend", "target": "hip:gfx942", "time_limit_s": TIME, "triton_version": "3.9.0", )"
    R"("max_rss_bytes": RSS})";

std::filesystem::path write(const util::TempDir& dir, const std::string& name,
                            const std::string& text) {
  auto path = dir.path() / name;
  std::ofstream(path) << text;
  return path;
}

std::string header(const std::string& time_limit = "null", const std::string& max_rss = "null") {
  std::string h = kHeader;
  h.replace(h.find("TIME"), 4, time_limit);
  h.replace(h.find("RSS"), 3, max_rss);
  return h;
}

std::filesystem::path data_dir() { return std::filesystem::path(PORTCHECK_SOURCE_DIR) / "data"; }

TEST(Reproducer, ReadsTheHeaderLine) {
  util::TempDir dir("reproducer-test");
  const auto h =
      read_reproducer(write(dir, "r.py", "#!/usr/bin/env python3\n# x\n" + header("2.5") + "\n"));
  EXPECT_EQ(h.fingerprint, "abc123abc123");
  EXPECT_EQ(h.target.name(), "hip:gfx942");
  EXPECT_EQ(h.target.warp_size, 64);
  ASSERT_TRUE(h.time_limit_s.has_value());
  EXPECT_DOUBLE_EQ(*h.time_limit_s, 2.5);
}

TEST(Reproducer, RefusesAFileThatIsNotOneNamingTheLineAndKey) {
  util::TempDir dir("reproducer-test");
  try {
    read_reproducer(write(dir, "plain.py", "print('hi')\n"));
    FAIL() << "accepted a file without a header";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no '# portcheck-repro:' line"), std::string::npos);
  }
  auto bad = header();
  bad.replace(bad.find("hip:gfx942"), 10, "tpu:v5");
  try {
    read_reproducer(write(dir, "bad.py", "\n\n" + bad + "\n"));
    FAIL() << "accepted an unknown target";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.py:3: key 'target'"), std::string::npos) << e.what();
  }
  try {
    read_reproducer(write(dir, "broken.py", "# portcheck-repro: {\"fingerprint\": 1\n"));
    FAIL() << "accepted broken JSON";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.py:1"), std::string::npos) << e.what();
  }
}

// A limit the supervisor cannot enforce once ran the file with none (-5 and "2" were dropped for
// the default, 1e300 overflowed the milliseconds): now the file, its line and the key say why.
TEST(Reproducer, RefusesALimitTheSupervisorCannotEnforce) {
  util::TempDir dir("reproducer-test");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"-5", "null"}, {R"("2")", "null"}, {"1e300", "null"},     {"0", "null"},
      {"null", "-1"}, {"null", "1.5"},    {"null", R"("1GiB")"}, {"null", "0"}};
  for (const auto& [time_limit, max_rss] : bad) {
    const auto key = time_limit != "null" ? "time_limit_s" : "max_rss_bytes";
    try {
      read_reproducer(write(dir, "r.py", "#!/usr/bin/env python3\n" + header(time_limit, max_rss)));
      ADD_FAILURE() << "accepted " << key << " " << time_limit << " " << max_rss;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("r.py:2: key '") + key + "'"),
                std::string::npos)
          << e.what();
    }
  }
  const auto h = read_reproducer(write(dir, "ok.py", header("2.5", "419430400")));
  EXPECT_EQ(h.max_rss_bytes, 419430400U);
}

// A stand-in reproducer: $2 is --result's file, $4 --progress's.
std::string script(const std::string& header_line, const std::string& body) {
  return header_line + "\n" + body + "\n";
}

TEST(Reproducer, ACompileThatSucceedsNoLongerReproduces) {
  util::TempDir dir("reproducer-test");
  const auto file = write(
      dir, "ok.sh",
      script(header(), R"(echo '{"status": "ok", "metadata": {"num_warps": 4}, "resources": {}, )"
                       R"("triton_version": "3.9.0"}' > "$2")"));
  const auto h = read_reproducer(file);
  const auto run = run_reproducer(file, h, "/bin/sh", "current", data_dir(), 60);
  EXPECT_EQ(run.reproduction, Reproduction::fixed);
  EXPECT_EQ(run.cell.triton_version, "3.9.0");
  EXPECT_EQ(describe(run, h), "no longer reproduces: it compiles");
}

TEST(Reproducer, TheSameFailureIsTheSameFingerprintAndAnotherDiffers) {
  util::TempDir dir("reproducer-test");
  const std::string fails =
      R"(echo '{"status": "error", "stage": "frontend", "error": {"type": )"
      R"("triton.compiler.errors.CompilationError", "message": "MESSAGE", "traceback": ""}, )"
      R"("triton_version": "3.9.0"}' > "$2")";
  auto with_message = [&](const std::string& message) {
    auto body = fails;
    body.replace(body.find("MESSAGE"), 7, message);
    return body;
  };
  const auto first = write(dir, "a.sh", script(header(), with_message("NameError: x")));
  const auto h = read_reproducer(first);
  const auto once = run_reproducer(first, h, "/bin/sh", "current", data_dir(), 60);
  ASSERT_EQ(once.cell.kind, FailureKind::frontend_error);
  ASSERT_EQ(once.reproduction, Reproduction::differs);  // the header's fingerprint is made up
  auto recorded = header();
  recorded.replace(recorded.find("abc123abc123"), 12, once.cell.fingerprint);
  const auto same = write(dir, "b.sh", script(recorded, with_message("NameError: x")));
  EXPECT_EQ(run_reproducer(same, read_reproducer(same), "/bin/sh", "current", data_dir(), 60)
                .reproduction,
            Reproduction::same);
  const auto other = write(dir, "c.sh", script(recorded, with_message("KeyError: y")));
  const auto differs =
      run_reproducer(other, read_reproducer(other), "/bin/sh", "current", data_dir(), 60);
  EXPECT_EQ(differs.reproduction, Reproduction::differs);
  EXPECT_NE(describe(differs, h).find("fails differently: frontend-error in frontend"),
            std::string::npos);
}

TEST(Reproducer, ARunPastTheRecordedLimitIsATimeoutInTheLastStageNamed) {
  util::TempDir dir("reproducer-test");
  const auto file =
      write(dir, "slow.sh", script(header("0.5"), R"(echo "stage ttgir" > "$4"; sleep 30)"));
  const auto run =
      run_reproducer(file, read_reproducer(file), "/bin/sh", "current", data_dir(), 60);
  EXPECT_EQ(run.cell.kind, FailureKind::timeout);
  EXPECT_EQ(run.cell.stage, "ttgir");
  EXPECT_LT(run.cell.wall_s, 10);
}

// An out-of-memory cell's file carries its limit: the run is stopped there, in the stage it was
// in, and judged as check judges a cell (`tail` holds all of a line it has not finished).
TEST(Reproducer, ARunPastTheRecordedMemoryLimitIsOutOfMemoryInTheLastStageNamed) {
  util::TempDir dir("reproducer-test");
  const auto file =
      write(dir, "greedy.sh",
            script(header("null", std::to_string(64ULL << 20)),
                   R"(echo "stage llir" > "$4"; head -c 2000000000 /dev/zero | tail > /dev/null)"));
  const auto run =
      run_reproducer(file, read_reproducer(file), "/bin/sh", "current", data_dir(), 60);
  EXPECT_EQ(run.cell.kind, FailureKind::oom);
  EXPECT_EQ(run.cell.stage, "llir");
  EXPECT_LT(run.cell.wall_s, 30);
}

}  // namespace
}  // namespace portcheck
