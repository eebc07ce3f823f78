// Unit tests for src/environments: version validation, listing and removing environments in a
// temporary TRITON_PORTCHECK_HOME with fake folders, and the wheel size estimate. No network.
#include "src/versions/environments.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "src/core/errors.hpp"
#include "src/versions/pip_steps.hpp"
#include "util/fs.hpp"
#include "util/unique_fd.hpp"
#include "util/zip.hpp"

namespace fs = std::filesystem;
using portcheck::pip_aims_elsewhere;
using portcheck::PipRunner;
using portcheck::UsageError;

namespace {

void write_plain(const fs::path& path, const std::string& contents) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

// Points TRITON_PORTCHECK_HOME at a fresh folder for one test, restoring the old value after.
class EnvironmentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("TRITON_PORTCHECK_HOME")) old_ = old;
    ::setenv("TRITON_PORTCHECK_HOME", home_.path().c_str(), 1);
    root_ = home_.path() / "envs";
    fs::create_directories(root_);
  }
  void TearDown() override {
    if (old_)
      ::setenv("TRITON_PORTCHECK_HOME", old_->c_str(), 1);
    else
      ::unsetenv("TRITON_PORTCHECK_HOME");
  }

  // A folder shaped like a finished environment: an executable bin/python and the marker.
  fs::path make_env(const std::string& name, bool with_marker = true, bool with_python = true) {
    const auto dir = root_ / name;
    fs::create_directories(dir / "bin");
    if (with_python) {
      write_plain(dir / "bin" / "python", "#!/bin/sh\n");
      ::chmod((dir / "bin" / "python").c_str(), 0755);
    }
    write_plain(dir / "lib" / "site-packages" / "triton" / "__init__.py", std::string(1000, 'x'));
    if (with_marker)
      write_plain(dir / portcheck::kEnvironmentMarker,
                  R"({"version": ")" + name +
                      R"(", "python": "3.11.7", "created": "2025-01-01T00:00:00Z", )"
                      R"("last_used": "2025-01-02T00:00:00Z"})");
    return dir;
  }

  util::TempDir home_{"portcheck-envs-test"};
  fs::path root_;
  std::optional<std::string> old_;
};

std::vector<std::string> listed_versions() {
  std::vector<std::string> out;
  for (const auto& e : portcheck::list_environments()) out.push_back(e.version);
  return out;
}

void put_le(std::string& s, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A zip made of just a central directory (the estimate reads nothing else) and its end record.
std::string fake_zip(const std::vector<std::pair<std::string, std::uint32_t>>& files) {
  std::string cd;
  for (const auto& [name, size] : files) {
    put_le(cd, 0x02014b50, 4);
    cd.append(16, '\0');  // versions, flags, method, time, date, crc
    put_le(cd, size / 3, 4);
    put_le(cd, size, 4);
    put_le(cd, name.size(), 2);
    cd.append(2 + 2 + 2 + 2 + 4 + 4, '\0');  // extra, comment, disk, attrs, local offset
    cd += name;
  }
  std::string zip = cd;
  put_le(zip, 0x06054b50, 4);
  put_le(zip, 0, 4);
  put_le(zip, files.size(), 2);
  put_le(zip, files.size(), 2);
  put_le(zip, cd.size(), 4);
  put_le(zip, 0, 4);
  put_le(zip, 0, 2);
  return zip;
}

}  // namespace

TEST(ValidateVersion, AcceptsPep440Releases) {
  for (const char* v : {"3.8.0", "3.9.0rc1", "2.1.0", "3.0.0a2", "3.0.0b1", "3.1.0.post1",
                        "3.2.0.dev20240101", "3", "1!2.0", "3.10.12"})
    EXPECT_NO_THROW(portcheck::validate_version(v)) << v;
}

TEST(ValidateVersion, RejectsPathsAndJunk) {
  for (const char* v : {"",       "../x",   "..",     ".",       "3.8.0/..",    "/tmp/x",  "3.8.0 ",
                        " 3.8.0", "3.8 .0", "latest", "v3.8.0",  "3.8.0+cu121", "3.8.0-1", "-3.8.0",
                        "3..8",   "3.8.",   ".3.8",   "3.8.0rc", "3.8.0\n",     "3.8.0;rm"})
    EXPECT_THROW(portcheck::validate_version(v), UsageError) << '"' << v << '"';
}

TEST(ValidateVersion, ErrorNamesTheValue) {
  try {
    portcheck::validate_version("../x");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'../x'"), std::string::npos) << e.what();
  }
}

TEST_F(EnvironmentsTest, RootAndDirLiveUnderHome) {
  EXPECT_EQ(portcheck::environments_root(), home_.path() / "envs");
  EXPECT_EQ(portcheck::environment_dir("3.8.0"), home_.path() / "envs" / "3.8.0");
  EXPECT_THROW(portcheck::environment_dir("../x"), UsageError);
  EXPECT_THROW(portcheck::environment_python("../x"), UsageError);
}

TEST_F(EnvironmentsTest, ListsOnlyCompleteEnvironmentsInVersionOrder) {
  make_env("3.10.0");
  make_env("3.9.0");
  make_env("3.9.0rc1");
  make_env("3.7.0", /*with_marker=*/false);                        // never finished
  make_env("3.6.0", /*with_marker=*/true, /*with_python=*/false);  // broken
  make_env(".tmp-3.8.0-abc123");                                   // being made
  make_env(".tmp-3.8.0-work-abc123");
  make_env("not-a-version");
  write_plain(root_ / "3.8.0.lock", "");

  EXPECT_EQ(listed_versions(), (std::vector<std::string>{"3.9.0rc1", "3.9.0", "3.10.0"}));
  const auto envs = portcheck::list_environments();
  ASSERT_EQ(envs.size(), 3U);
  EXPECT_EQ(envs[1].python_version, "3.11.7");
  EXPECT_EQ(envs[1].last_used, "2025-01-02T00:00:00Z");
  EXPECT_EQ(envs[1].path, root_ / "3.9.0");
  EXPECT_GE(envs[1].bytes, 1000U);

  EXPECT_EQ(portcheck::environment_python("3.9.0"), root_ / "3.9.0" / "bin" / "python");
  EXPECT_EQ(portcheck::environment_python("3.7.0"), std::nullopt);
  EXPECT_EQ(portcheck::environment_python("3.6.0"), std::nullopt);
  EXPECT_EQ(portcheck::environment_python("3.8.0"), std::nullopt);
}

TEST_F(EnvironmentsTest, ListWithoutRootIsEmpty) {
  fs::remove_all(root_);
  EXPECT_TRUE(portcheck::list_environments().empty());
  EXPECT_FALSE(portcheck::remove_environment("3.8.0"));
}

TEST_F(EnvironmentsTest, TouchUpdatesLastUsed) {
  make_env("3.8.0");
  portcheck::touch_environment("3.8.0");
  const auto envs = portcheck::list_environments();
  ASSERT_EQ(envs.size(), 1U);
  EXPECT_NE(envs[0].last_used, "2025-01-02T00:00:00Z");
  EXPECT_EQ(envs[0].last_used.size(), 20U) << envs[0].last_used;
  EXPECT_EQ(envs[0].python_version, "3.11.7");             // the rest of the marker is kept
  EXPECT_NO_THROW(portcheck::touch_environment("3.9.0"));  // absent: nothing happens
  EXPECT_FALSE(fs::exists(root_ / "3.9.0"));
}

TEST_F(EnvironmentsTest, RemoveDeletesTheFolderAndLeavesNoTemporaries) {
  make_env("3.8.0");
  make_env("3.9.0");
  make_env(".tmp-3.8.0-stale1");  // left by an interrupted add: swept under the lock
  EXPECT_TRUE(portcheck::remove_environment("3.8.0"));
  EXPECT_FALSE(fs::exists(root_ / "3.8.0"));
  EXPECT_FALSE(portcheck::remove_environment("3.8.0"));
  EXPECT_EQ(listed_versions(), (std::vector<std::string>{"3.9.0"}));
  for (const auto& entry : fs::directory_iterator(root_))
    EXPECT_FALSE(entry.path().filename().string().starts_with(".tmp-")) << entry.path();
  // An incomplete folder under a version's name is removed too.
  make_env("3.7.0", /*with_marker=*/false);
  EXPECT_TRUE(portcheck::remove_environment("3.7.0"));
  EXPECT_FALSE(fs::exists(root_ / "3.7.0"));
  EXPECT_THROW(portcheck::remove_environment("../x"), UsageError);
}

TEST_F(EnvironmentsTest, AddRejectsBadArgumentsBeforeAnyWork) {
  EXPECT_THROW(portcheck::add_environment("../x", {}, ""), UsageError);
  EXPECT_THROW(portcheck::add_environment("3.8.0", {"--index-url=http://x"}, ""), UsageError);
  EXPECT_THROW(portcheck::add_environment("3.8.0", {""}, ""), UsageError);
  EXPECT_TRUE(portcheck::list_environments().empty());
}

// A `python` whose venv's pip fails `download` with `stderr` (in a file: printf would choke on
// 200,000 characters in an argument).
std::string fake_python_whose_pip_says(const fs::path& folder, const std::string& stderr_text) {
  write_plain(folder / "pip-stderr", stderr_text);
  const auto python = folder / "python";
  write_plain(python,
              "#!/bin/sh\n"
              "mkdir -p \"$3/bin\"\n"
              "printf '#!/bin/sh\\ncat " +
                  (folder / "pip-stderr").string() +
                  " >&2\\nexit 1\\n' > \"$3/bin/python\"\n"
                  "chmod +x \"$3/bin/python\"\n");
  ::chmod(python.c_str(), 0755);
  return python.string();
}

// pip's lines were read with std::regex, which recursed once per character: a long version list
// or network error crashed the tool (SIGSEGV) instead of failing the add.
TEST_F(EnvironmentsTest, LongPipLinesAreReadNotACrash) {
  std::string versions;
  for (int i = 0; i < 20000; ++i) versions += "3.0." + std::to_string(i) + ", ";
  const auto offered = fake_python_whose_pip_says(
      home_.path(),
      "ERROR: Could not find a version that satisfies the requirement triton==3.8.0 "
      "(from versions: " +
          versions + "2.0.0)\n");
  try {
    portcheck::add_environment("3.8.0", {}, offered);
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    // Only what the tool compiles with: pip's 2.x releases would be refused (issue 51).
    EXPECT_NE(std::string(e.what()).find("compiles with: 3.0.0, 3.0.1, "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(", 3.0.19999"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find("2.0.0"), std::string::npos);
  }
  const auto network = fake_python_whose_pip_says(
      home_.path(),
      "WARNING: Retrying after connection broken by 'ProxyError: " + std::string(200000, 'x') +
          "': /simple/triton/\nERROR: No matching distribution\n");
  try {
    portcheck::add_environment("3.8.0", {}, network);
    ADD_FAILURE() << "no EnvironmentError";
  } catch (const portcheck::EnvironmentError& e) {
    // stderr is read bounded (head and tail): the repr's middle is left out.
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot reach the package index (ProxyError: " + std::string(20000, 'x')),
              std::string::npos);
    EXPECT_NE(what.find("; pip: ERROR: No matching distribution"), std::string::npos);
  }
}

TEST_F(EnvironmentsTest, ZipUncompressedBytesSumsTheCentralDirectory) {
  const auto zip = home_.path() / "fake.whl";
  write_plain(zip, fake_zip({{"triton/__init__.py", 100}, {"triton/_C/libtriton.so", 5000000}}));
  EXPECT_EQ(util::zip_uncompressed_bytes(zip), 5000100U);
  write_plain(zip, fake_zip({}));
  EXPECT_EQ(util::zip_uncompressed_bytes(zip), 0U);
  write_plain(zip, "not a zip at all, just some text that is long enough");
  EXPECT_EQ(util::zip_uncompressed_bytes(zip), std::nullopt);
  EXPECT_EQ(util::zip_uncompressed_bytes(home_.path() / "missing.whl"), std::nullopt);
}

// Issue 14, item 9: what killed or failed `env add` runs leave is swept by the next command, unless
// a live process still holds that version's lock.
TEST_F(EnvironmentsTest, SweepRemovesLeftoversNobodyHolds) {
  make_env("3.8.0");
  make_env(".tmp-3.3.0-Ab12Cd");       // the venv of an add killed mid-install
  make_env(".tmp-3.3.0-work-Ef34Gh");  // its downloads and logs
  write_plain(root_ / "3.3.0.lock", "");
  write_plain(root_ / "3.4.0.lock", "");  // a failed add's lock file
  make_env(".tmp-3.5.0-Ij56Kl");          // a leftover without its lock file
  EXPECT_EQ(portcheck::sweep_abandoned_environments(), 3U);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(root_))
    left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, (std::vector<std::string>{"3.8.0"}));
  EXPECT_EQ(listed_versions(), (std::vector<std::string>{"3.8.0"}));
}

TEST_F(EnvironmentsTest, SweepLeavesWhatALiveAddHolds) {
  make_env(".tmp-3.3.0-Ab12Cd");
  const util::UniqueFd held(::open((root_ / "3.3.0.lock").c_str(), O_RDWR | O_CREAT, 0644));
  ASSERT_EQ(::flock(held.get(), LOCK_EX), 0);  // as `env add 3.3.0` holds it while it works
  EXPECT_EQ(portcheck::sweep_abandoned_environments(), 0U);
  EXPECT_TRUE(fs::exists(root_ / ".tmp-3.3.0-Ab12Cd"));
  EXPECT_TRUE(fs::exists(root_ / "3.3.0.lock"));
  ::flock(held.get(), LOCK_UN);
  EXPECT_EQ(portcheck::sweep_abandoned_environments(), 1U);
  EXPECT_FALSE(fs::exists(root_ / ".tmp-3.3.0-Ab12Cd"));
  EXPECT_FALSE(fs::exists(root_ / "3.3.0.lock"));
}

TEST_F(EnvironmentsTest, RemoveLeavesNoLockFile) {
  make_env("3.8.0");
  EXPECT_TRUE(portcheck::remove_environment("3.8.0"));
  EXPECT_FALSE(fs::exists(root_ / "3.8.0.lock"));
}

TEST(CurrentTriton, AVersionEqualToTheTritonInUseIsCurrent) {
  std::vector<std::string> replaced;
  EXPECT_EQ(portcheck::use_current_for_installed({"3.9.0", "3.8.0"}, "3.9.0", &replaced),
            (std::vector<std::string>{"current", "3.8.0"}));
  EXPECT_EQ(replaced, (std::vector<std::string>{"3.9.0"}));
  replaced.clear();
  // Listed once, whichever came first; "3.9" names the same release.
  EXPECT_EQ(portcheck::use_current_for_installed({"current", "3.9"}, "3.9.0", &replaced),
            (std::vector<std::string>{"current"}));
  EXPECT_EQ(replaced, (std::vector<std::string>{"3.9"}));
  // Nothing to compare with (no Triton in the invoking interpreter, or a local build's version).
  EXPECT_EQ(portcheck::use_current_for_installed({"3.9.0"}, "", nullptr),
            (std::vector<std::string>{"3.9.0"}));
  EXPECT_EQ(portcheck::use_current_for_installed({"3.9.0"}, "3.9.0+git1234", nullptr),
            (std::vector<std::string>{"3.9.0"}));
  EXPECT_FALSE(portcheck::same_release("3.9.0rc1", "3.9.0"));
  EXPECT_TRUE(portcheck::same_release("3.9.0", "3.9"));
}

// `pip --python` came with pip 22.3: an environment's steps use the invoking Python's pip from
// there on, its own (ensurepip's) before, and whenever the line is not pip's.
TEST(PipRunner, TheInvokingPipAimsAtTheEnvironmentFrom22Point3) {
  EXPECT_TRUE(
      pip_aims_elsewhere("pip 25.3 from /v/lib/python3.11/site-packages/pip (python 3.11)"));
  EXPECT_TRUE(pip_aims_elsewhere("pip 22.3 from /x (python 3.9)"));
  EXPECT_TRUE(pip_aims_elsewhere("pip 23.0.1 from /x (python 3.9)"));
  EXPECT_FALSE(pip_aims_elsewhere("pip 22.2.2 from /x (python 3.9)"));
  EXPECT_FALSE(pip_aims_elsewhere("pip 9.0.1 from /x (python 3.6)"));
  EXPECT_FALSE(pip_aims_elsewhere("/usr/bin/python3: No module named pip"));
  EXPECT_FALSE(pip_aims_elsewhere("pip x.y from /x"));
  EXPECT_FALSE(pip_aims_elsewhere(""));
  const PipRunner outer{"/usr/bin/python3", "/env/bin/python"};
  EXPECT_EQ(outer.command("install"),
            (std::vector<std::string>{"/usr/bin/python3", "-m", "pip", "--python",
                                      "/env/bin/python", "install"}));
  const PipRunner own{"", "/env/bin/python"};
  EXPECT_EQ(own.command("download"),
            (std::vector<std::string>{"/env/bin/python", "-m", "pip", "download"}));
}
