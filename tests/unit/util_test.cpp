// Unit tests for util/: strings, byte sizes, SHA-1, files and temporary directories, /proc.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include "util/file_lock.hpp"
#include "util/fs.hpp"
#include "util/proc.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

namespace {

void write_plain(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

std::vector<std::string> dir_entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// parse_byte_size / format_bytes

TEST(ParseByteSize, BinaryUnits) {
  EXPECT_EQ(util::parse_byte_size("8GiB"), std::optional<std::uint64_t>(8ULL << 30));
  EXPECT_EQ(util::parse_byte_size("512MiB"), std::optional<std::uint64_t>(512ULL << 20));
  EXPECT_EQ(util::parse_byte_size("4KiB"), std::optional<std::uint64_t>(4096));
  EXPECT_EQ(util::parse_byte_size("2G"), std::optional<std::uint64_t>(2ULL << 30));
  EXPECT_EQ(util::parse_byte_size("3M"), std::optional<std::uint64_t>(3ULL << 20));
  EXPECT_EQ(util::parse_byte_size("1k"), std::optional<std::uint64_t>(1024));
}

TEST(ParseByteSize, DecimalUnitsAndPlainNumbers) {
  EXPECT_EQ(util::parse_byte_size("100"), std::optional<std::uint64_t>(100));
  EXPECT_EQ(util::parse_byte_size("0"), std::optional<std::uint64_t>(0));
  EXPECT_EQ(util::parse_byte_size("1000000"), std::optional<std::uint64_t>(1000000));
  EXPECT_EQ(util::parse_byte_size("7B"), std::optional<std::uint64_t>(7));
  EXPECT_EQ(util::parse_byte_size("10kB"), std::optional<std::uint64_t>(10000));
  EXPECT_EQ(util::parse_byte_size("5MB"), std::optional<std::uint64_t>(5000000));
  EXPECT_EQ(util::parse_byte_size("2GB"), std::optional<std::uint64_t>(2000000000ULL));
}

TEST(ParseByteSize, CaseAndWhitespaceInsensitive) {
  EXPECT_EQ(util::parse_byte_size("8gib"), std::optional<std::uint64_t>(8ULL << 30));
  EXPECT_EQ(util::parse_byte_size("8GIB"), std::optional<std::uint64_t>(8ULL << 30));
  EXPECT_EQ(util::parse_byte_size("  16 MiB \n"), std::optional<std::uint64_t>(16ULL << 20));
}

TEST(ParseByteSize, RejectsMalformedInput) {
  for (const char* bad : {"", "   ", "GiB", "abc", "8XB", "8 GiBs", "-1", "-1GiB", "8.5GiB", "1 2",
                          "0x10", "8GiB8", "+8"}) {
    EXPECT_EQ(util::parse_byte_size(bad), std::nullopt) << "input: '" << bad << "'";
  }
}

TEST(ParseByteSize, RejectsValuesThatDoNotFitIn64Bits) {
  // Larger than 2^64 before any unit: from_chars reports out of range.
  EXPECT_EQ(util::parse_byte_size("99999999999999999999"), std::nullopt);
  // Fits as a number but overflows once multiplied by the unit: must not wrap around silently.
  EXPECT_EQ(util::parse_byte_size("20000000000GiB"), std::nullopt);
  EXPECT_EQ(util::parse_byte_size("18446744073709551615k"), std::nullopt);
  // The largest value that does fit is still accepted.
  EXPECT_EQ(util::parse_byte_size("18446744073709551615"),
            std::optional<std::uint64_t>(18446744073709551615ULL));
  EXPECT_EQ(util::parse_byte_size("17179869183GiB"),
            std::optional<std::uint64_t>(17179869183ULL << 30));
}

TEST(FormatDuration, SecondsMinutesHours) {
  EXPECT_EQ(util::format_duration(0), "0 s");
  EXPECT_EQ(util::format_duration(-3), "0 s");
  EXPECT_EQ(util::format_duration(59.4), "59 s");
  EXPECT_EQ(util::format_duration(59.6), "1 min 00 s");
  EXPECT_EQ(util::format_duration(185), "3 min 05 s");
  EXPECT_EQ(util::format_duration(7620), "2 h 07 min");
}

TEST(FormatBytes, PicksTheLargestFittingUnit) {
  EXPECT_EQ(util::format_bytes(0), "0 B");
  EXPECT_EQ(util::format_bytes(1023), "1023 B");
  EXPECT_EQ(util::format_bytes(1024), "1.0 KiB");
  EXPECT_EQ(util::format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(util::format_bytes((1ULL << 20) - 1), "1024.0 KiB");
  EXPECT_EQ(util::format_bytes(512ULL << 20), "512.0 MiB");
  EXPECT_EQ(util::format_bytes(8ULL << 30), "8.0 GiB");
  EXPECT_EQ(util::format_bytes((5ULL << 30) / 2), "2.5 GiB");
}

TEST(FormatBytes, RoundTripsWithParse) {
  EXPECT_EQ(util::format_bytes(*util::parse_byte_size("512MiB")), "512.0 MiB");
  EXPECT_EQ(util::format_bytes(*util::parse_byte_size("8GiB")), "8.0 GiB");
}

// ---------------------------------------------------------------------------------------------
// sha1_hex

TEST(Sha1, KnownVectors) {
  EXPECT_EQ(util::sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(util::sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(util::sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(util::sha1_hex("The quick brown fox jumps over the lazy dog"),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

TEST(Sha1, PaddingBoundaries) {
  // 55/56 and 63/64/65 bytes straddle the one-block/two-block padding boundaries.
  const std::pair<std::size_t, const char*> cases[] = {
      {55, "c1c8bbdc22796e28c0e15163d20899b65621d65a"},
      {56, "c2db330f6083854c99d4b5bfb6e8f29f201be699"},
      {63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5"},
      {64, "0098ba824b5c16427bd7a1122a5a442a25ec644d"},
      {65, "11655326c708d70319be2610e8a57d9a5b959d3b"},
      {119, "ee971065aaa017e0632a8ca6c77bb3bf8b1dfc56"},
      {120, "f34c1488385346a55709ba056ddd08280dd4c6d6"},
  };
  for (const auto& [n, want] : cases) EXPECT_EQ(util::sha1_hex(std::string(n, 'a')), want) << n;
}

TEST(Sha1, LongAndBinaryInput) {
  EXPECT_EQ(util::sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  EXPECT_EQ(util::sha1_hex(all_bytes), "4916d6bdb7f78e6803698cab32d1586ea457dfc8");
}

TEST(Sha256, KnownVectorsInBase64) {
  // Python's base64.b64encode(hashlib.sha256(data).digest()); 55/56 and 64 bytes straddle the
  // padding boundaries.
  const std::pair<std::string, const char*> cases[] = {
      {"", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
      {"abc", "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="},
      {std::string(55, 'a'), "n0OQ+NMMLdkuyfCVtl4rmumwqSWlJY4kHJ8ekQ9zQxg="},
      {std::string(56, 'a'), "s1Q5pKxvCUi21vnjxq8PX1kM4g8b3nCQ73lwaG7Gc4o="},
      {std::string(64, 'a'), "/+BU/nrgy23GXDr5th1SCfQ5hR20PQulmXM33xVGaOs="},
      {std::string(1000, 'a'), "Qe3s5C1j6Nm/UVqbppMuHCDLyfWl0TRkWttdsblzfqM="},
  };
  for (const auto& [data, want] : cases) EXPECT_EQ(util::sha256_base64(data), want) << data.size();
}

// ---------------------------------------------------------------------------------------------
// trim / split / split_lines / join / starts_with

TEST(Strings, Trim) {
  EXPECT_EQ(util::trim("  x y \t\n"), "x y");
  EXPECT_EQ(util::trim("x"), "x");
  EXPECT_EQ(util::trim(""), "");
  EXPECT_EQ(util::trim(" \t\r\n "), "");
  EXPECT_EQ(util::trim("\tinner  space\r"), "inner  space");
}

TEST(Strings, SplitKeepsEmptyFields) {
  EXPECT_EQ(util::split("a,b,c", ','), (Strings{"a", "b", "c"}));
  EXPECT_EQ(util::split("a,,b,", ','), (Strings{"a", "", "b", ""}));
  EXPECT_EQ(util::split(",", ','), (Strings{"", ""}));
  EXPECT_EQ(util::split("", ','), (Strings{""}));
  EXPECT_EQ(util::split("no separator", ','), (Strings{"no separator"}));
}

TEST(Strings, SplitLines) {
  EXPECT_EQ(util::split_lines("a\nb\nc"), (Strings{"a", "b", "c"}));
  EXPECT_EQ(util::split_lines("a\r\nb\r\n"), (Strings{"a", "b"}));
  EXPECT_EQ(util::split_lines("a\n\nb\n"), (Strings{"a", "", "b"}));
  EXPECT_EQ(util::split_lines(""), Strings{});
  EXPECT_EQ(util::split_lines("\n"), (Strings{""}));
  EXPECT_EQ(util::split_lines("only"), (Strings{"only"}));
}

TEST(Strings, JoinAndStartsWith) {
  EXPECT_EQ(util::join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(util::join({"solo"}, "-"), "solo");
  EXPECT_EQ(util::join({}, "-"), "");
  EXPECT_EQ(util::join(util::split("x:y::z", ':'), ":"), "x:y::z");
  EXPECT_TRUE(util::starts_with("triton-portcheck", "triton"));
  EXPECT_TRUE(util::starts_with("abc", ""));
  EXPECT_FALSE(util::starts_with("abc", "abcd"));
  EXPECT_FALSE(util::starts_with("abc", "b"));
}

// The shell itself reads each quoted word back as it was: quotes, spaces, $, backslashes.
TEST(Strings, ShellQuotedWordsReachTheCommandUnchanged) {
  for (const std::string word : {"plain", "two words", "it's", "$HOME \\n `id` \"q\"", "'", ""}) {
    const std::string command = "printf %s " + util::shell_quoted(word);
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buffer[256];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      out.append(buffer, n);
    EXPECT_EQ(::pclose(pipe), 0);
    EXPECT_EQ(out, word) << command;
  }
}

TEST(Strings, ClosestMatchIsAtMostTwoEditsAway) {
  EXPECT_EQ(util::closest_match("chek", {"check", "capture"}), "check");
  EXPECT_EQ(util::closest_match("num_wraps", {"num_stages", "num_warps"}), "num_warps");
  EXPECT_EQ(util::closest_match("bogus", {"check", "capture", "cache"}), "");
  EXPECT_EQ(util::closest_match("anything", {}), "");
}

// ---------------------------------------------------------------------------------------------
// utf8_codepoints / append_utf8 / valid_utf8

TEST(Utf8, ValidTextIsUnchanged) {
  // One, two, three and four bytes: "a", "é", "€", "𝄞" (U+1D11E).
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E";
  EXPECT_EQ(util::utf8_codepoints(text), std::u32string(U"a\u00E9\u20AC\U0001D11E"));
  EXPECT_EQ(util::valid_utf8(text), text);
  EXPECT_EQ(util::valid_utf8(""), "");
  EXPECT_EQ(util::utf8_codepoints(std::string("a\0b", 3)), std::u32string(U"a\0b", 3));
  // The extremes of each length, and U+FFFD itself.
  for (const std::string edge :
       {"\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
        "\xEF\xBF\xBD", "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_EQ(util::valid_utf8(edge), edge);
    EXPECT_EQ(util::utf8_codepoints(edge).size(), 1u);
  }
}

TEST(Utf8, InvalidBytesBecomeReplacementCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  // A stray continuation byte, bytes that never start a sequence.
  EXPECT_EQ(util::valid_utf8("a\x80z"), "a" + fffd + "z");
  EXPECT_EQ(util::valid_utf8("\xFF\xFE"), fffd + fffd);
  EXPECT_EQ(util::utf8_codepoints("a\xFFz"), std::u32string(U"a\uFFFDz"));
  // A truncated sequence: its lead byte becomes U+FFFD, then the next bytes are decoded afresh.
  EXPECT_EQ(util::valid_utf8("\xE2\x82"), fffd + fffd);
  EXPECT_EQ(util::valid_utf8("\xE2\x82z"), fffd + fffd + "z");
  EXPECT_EQ(util::valid_utf8("\xF0\x9D\x84"), fffd + fffd + fffd);
  // Surrogates and code points beyond U+10FFFF.
  EXPECT_EQ(util::valid_utf8("\xED\xA0\x80"), fffd + fffd + fffd);
  EXPECT_EQ(util::valid_utf8("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);
  EXPECT_EQ(util::valid_utf8("\xF8\x88\x80\x80\x80"), fffd + fffd + fffd + fffd + fffd);
}

TEST(Utf8, OverlongEncodingsAreRejected) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(util::valid_utf8("\xC0\xAF"), fffd + fffd);  // '/'
  EXPECT_EQ(util::valid_utf8("\xC1\xBF"), fffd + fffd);
  EXPECT_EQ(util::valid_utf8("\xE0\x80\xAF"), fffd + fffd + fffd);
  EXPECT_EQ(util::valid_utf8("\xE0\x9F\xBF"), fffd + fffd + fffd);
  EXPECT_EQ(util::valid_utf8("\xF0\x80\x80\xAF"), fffd + fffd + fffd + fffd);
  EXPECT_EQ(util::valid_utf8("\xF0\x8F\xBF\xBF"), fffd + fffd + fffd + fffd);
  EXPECT_EQ(util::utf8_codepoints("\xC0\x80"), std::u32string(U"\uFFFD\uFFFD"));
}

TEST(Utf8, AppendEncodesEachLength) {
  std::string out;
  util::append_utf8(out, U'a');
  util::append_utf8(out, U'\u00E9');
  util::append_utf8(out, U'\u20AC');
  util::append_utf8(out, U'\U0001D11E');
  util::append_utf8(out, U'\U0010FFFF');
  EXPECT_EQ(out, "a\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\xF4\x8F\xBF\xBF");
  std::string round_trip;
  for (const char32_t cp : util::utf8_codepoints(out)) util::append_utf8(round_trip, cp);
  EXPECT_EQ(round_trip, out);
}

// ---------------------------------------------------------------------------------------------
// TempDir

TEST(TempDir, CreatedPrivateAndRemovedWithContents) {
  fs::path where;
  {
    util::TempDir dir("portcheck-unit");
    where = dir.path();
    ASSERT_TRUE(fs::is_directory(where));
    EXPECT_NE(where.filename().string().find("portcheck-unit-"), std::string::npos) << where;
    struct stat st {};
    ASSERT_EQ(::stat(where.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    fs::create_directories(where / "a" / "b");
    write_plain(where / "a" / "b" / "file.txt", "hello");
    write_plain(where / "top.txt", "x");
  }
  EXPECT_FALSE(fs::exists(where)) << where;
}

TEST(TempDir, InAFolderOfTheCallersAndKeptWhenReleased) {
  util::TempDir parent("portcheck-unit");
  fs::path kept;
  {
    util::TempDir staging(parent.path(), ".tmp-3.9.0-");
    kept = staging.path();
    EXPECT_EQ(kept.parent_path(), parent.path());
    EXPECT_EQ(kept.filename().string().rfind(".tmp-3.9.0-", 0), 0u) << kept;
    staging.release();
  }
  EXPECT_TRUE(fs::is_directory(kept)) << "released: the caller owns it";
  EXPECT_THROW(util::TempDir(parent.path() / "missing", "x-"), util::WriteError);
}

// FileLock

TEST(FileLock, OneHolderAtATimeAndNoFileLeftBehind) {
  util::TempDir dir("portcheck-unit");
  const auto file = dir.path() / "3.9.0.lock";
  {
    const util::FileLock held(file);
    EXPECT_TRUE(held.held());
    EXPECT_TRUE(fs::exists(file));
    const util::FileLock other(file, util::FileLock::Wait::no);
    EXPECT_FALSE(other.held()) << "someone alive holds it";
  }
  EXPECT_FALSE(fs::exists(file)) << "its holder removes the file before unlocking";
  const util::FileLock again(file, util::FileLock::Wait::no);
  EXPECT_TRUE(again.held());
  EXPECT_THROW(util::FileLock(dir.path() / "missing" / "x.lock"), std::system_error);
}

TEST(TempDir, TwoInstancesDiffer) {
  util::TempDir a("portcheck-unit");
  util::TempDir b("portcheck-unit");
  EXPECT_NE(a.path(), b.path());
}

TEST(TempDir, MoveTransfersOwnership) {
  fs::path where;
  {
    util::TempDir outer("portcheck-unit");
    where = outer.path();
    {
      util::TempDir moved(std::move(outer));
      EXPECT_EQ(moved.path(), where);
      EXPECT_TRUE(outer.path().empty());  // NOLINT(bugprone-use-after-move): checking the contract
      EXPECT_TRUE(fs::is_directory(where));
    }
    // The moved-to object removed it; the moved-from one must not have kept (or removed) anything.
    EXPECT_FALSE(fs::exists(where));
  }
  util::TempDir a("portcheck-unit");
  util::TempDir b("portcheck-unit");
  const fs::path a_path = a.path();
  const fs::path b_path = b.path();
  a = std::move(b);  // the directory `a` held before is removed
  EXPECT_FALSE(fs::exists(a_path));
  EXPECT_EQ(a.path(), b_path);
  EXPECT_TRUE(fs::is_directory(b_path));
}

TEST(TempDir, HonoursTmpdir) {
  util::TempDir base("portcheck-unit-base");
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", base.path().c_str(), 1);
  fs::path inner;
  {
    util::TempDir dir("inner");
    inner = dir.path();
  }
  if (old)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  EXPECT_EQ(inner.parent_path(), base.path());
  EXPECT_FALSE(fs::exists(inner));
}

// ---------------------------------------------------------------------------------------------
// read_file / read_file_bounded / atomic_write_file

TEST(ReadFile, WholeFileAndMissingFile) {
  util::TempDir dir("portcheck-unit");
  std::string binary("a\0b\r\nc", 6);
  write_plain(dir.path() / "f", binary);
  EXPECT_EQ(util::read_file(dir.path() / "f"), binary);
  try {
    (void)util::read_file(dir.path() / "missing");
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}

TEST(ReadFileBounded, ShortFileIsReturnedWhole) {
  util::TempDir dir("portcheck-unit");
  write_plain(dir.path() / "f", "0123456789");
  EXPECT_EQ(util::read_file_bounded(dir.path() / "f", 100), "0123456789");
  EXPECT_EQ(util::read_file_bounded(dir.path() / "f", 10), "0123456789");  // exactly at the limit
  write_plain(dir.path() / "empty", "");
  EXPECT_EQ(util::read_file_bounded(dir.path() / "empty", 10), "");
}

TEST(ReadFileBounded, MissingFileIsNullopt) {
  util::TempDir dir("portcheck-unit");
  EXPECT_EQ(util::read_file_bounded(dir.path() / "missing", 100), std::nullopt);
}

TEST(ReadFileBounded, LongFileKeepsHeadAndTail) {
  util::TempDir dir("portcheck-unit");
  const std::string head = "HEAD-START:" + std::string(39, 'h');  // 50 bytes
  const std::string middle(1000, 'm');
  const std::string tail = std::string(41, 't') + ":TAIL-END";  // 50 bytes
  ASSERT_EQ(head.size(), 50u);
  ASSERT_EQ(tail.size(), 50u);
  write_plain(dir.path() / "log", head + middle + tail);

  const auto got = util::read_file_bounded(dir.path() / "log", 100);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->substr(0, 50), head);
  EXPECT_EQ(got->substr(got->size() - 50), tail);
  EXPECT_NE(got->find("1000 bytes omitted"), std::string::npos) << *got;
  EXPECT_EQ(got->find(std::string(10, 'm')), std::string::npos) << "middle should be dropped";
  EXPECT_LT(got->size(), 200u);

  // An odd limit keeps floor(limit/2) at each end and counts the rest as omitted.
  const auto odd = util::read_file_bounded(dir.path() / "log", 11);
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(odd->substr(0, 5), "HEAD-");
  EXPECT_EQ(odd->substr(odd->size() - 5), "L-END");
  EXPECT_NE(odd->find("1090 bytes omitted"), std::string::npos) << *odd;
}

TEST(AtomicWriteFile, WritesContentAndLeavesNoTempFile) {
  util::TempDir dir("portcheck-unit");
  const fs::path target = dir.path() / "report.json";
  util::atomic_write_file(target, "first version\n");
  EXPECT_EQ(util::read_file(target), "first version\n");
  EXPECT_EQ(dir_entries(dir.path()), Strings{"report.json"});

  const std::string big(300000, 'z');
  util::atomic_write_file(target, big);  // replaces the existing file
  EXPECT_EQ(util::read_file(target), big);
  util::atomic_write_file(target, "");
  EXPECT_EQ(util::read_file(target), "");
  EXPECT_EQ(dir_entries(dir.path()), Strings{"report.json"});

  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicWriteFile, RelativePathWritesIntoCurrentDirectory) {
  util::TempDir dir("portcheck-unit");
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir.path());
  util::atomic_write_file("relative.txt", "rel");
  fs::current_path(old_cwd);
  EXPECT_EQ(util::read_file(dir.path() / "relative.txt"), "rel");
  EXPECT_EQ(dir_entries(dir.path()), Strings{"relative.txt"});
}

TEST(AtomicWriteFile, MissingDirectoryThrowsAndLeavesNothing) {
  util::TempDir dir("portcheck-unit");
  EXPECT_THROW(util::atomic_write_file(dir.path() / "no-such-dir" / "f", "x"), std::runtime_error);
  EXPECT_TRUE(dir_entries(dir.path()).empty());
}

TEST(AtomicWriteFile, RenameFailureRemovesTempFile) {
  util::TempDir dir("portcheck-unit");
  // A non-empty directory at the target path: the temporary is written, the rename fails.
  fs::create_directories(dir.path() / "target" / "inside");
  EXPECT_THROW(util::atomic_write_file(dir.path() / "target", "x"), std::runtime_error);
  EXPECT_EQ(dir_entries(dir.path()), Strings{"target"});
}

// ---------------------------------------------------------------------------------------------
// relative_if_inside

TEST(RelativeIfInside, InsideBecomesRelative) {
  EXPECT_EQ(util::relative_if_inside("/repo/src/a.py", "/repo"), fs::path("src/a.py"));
  EXPECT_EQ(util::relative_if_inside("/repo/a.py", "/repo/"), fs::path("a.py"));
  EXPECT_EQ(util::relative_if_inside("/repo", "/repo"), fs::path("."));
  EXPECT_EQ(util::relative_if_inside("src/a.py", "src"), fs::path("a.py"));
}

TEST(RelativeIfInside, OutsideIsUnchanged) {
  EXPECT_EQ(util::relative_if_inside("/other/a.py", "/repo"), fs::path("/other/a.py"));
  EXPECT_EQ(util::relative_if_inside("/repository/a.py", "/repo"), fs::path("/repository/a.py"));
  EXPECT_EQ(util::relative_if_inside("/a.py", "/repo"), fs::path("/a.py"));
  // One absolute, the other relative: not comparable, so unchanged.
  EXPECT_EQ(util::relative_if_inside("src/a.py", "/repo"), fs::path("src/a.py"));
  EXPECT_EQ(util::relative_if_inside("/repo/src/a.py", "repo"), fs::path("/repo/src/a.py"));
}

TEST(RelativeIfInside, DotDotLeavesTheRoot) {
  EXPECT_EQ(util::relative_if_inside("/repo/../etc/passwd", "/repo"),
            fs::path("/repo/../etc/passwd"));
  EXPECT_EQ(util::relative_if_inside("../a.py", "."), fs::path("../a.py"));
  EXPECT_EQ(util::relative_if_inside("/repo/a.py", "/repo/src"), fs::path("/repo/a.py"));
  // Nothing is normalised: a ".." further on stays in the result.
  EXPECT_EQ(util::relative_if_inside("/repo/src/../a.py", "/repo"), fs::path("src/../a.py"));
}

// ---------------------------------------------------------------------------------------------
// /proc helpers

TEST(Proc, SnapshotFindsThisProcess) {
  const auto all = util::snapshot_processes();
  ASSERT_FALSE(all.empty());
  const auto self = std::find_if(all.begin(), all.end(),
                                 [](const util::ProcessInfo& p) { return p.pid == ::getpid(); });
  ASSERT_NE(self, all.end());
  EXPECT_EQ(self->ppid, ::getppid());
  EXPECT_EQ(self->pgrp, ::getpgrp());
  EXPECT_EQ(self->session, ::getsid(0));
  EXPECT_EQ(self->state, 'R');  // it is reading /proc right now
  EXPECT_GT(self->rss_bytes, 0u);

  const auto members = util::session_members(all, ::getsid(0));
  EXPECT_TRUE(std::any_of(members.begin(), members.end(),
                          [](const util::ProcessInfo& p) { return p.pid == ::getpid(); }));
  for (const auto& p : members) EXPECT_EQ(p.session, ::getsid(0));
}

TEST(Proc, SessionMembersFilters) {
  std::vector<util::ProcessInfo> all(4);
  all[0].pid = 10;
  all[0].session = 10;
  all[1].pid = 11;
  all[1].session = 10;
  all[2].pid = 12;
  all[2].session = 12;
  all[3].pid = 13;
  all[3].session = 10;
  const auto members = util::session_members(all, 10);
  ASSERT_EQ(members.size(), 3u);
  EXPECT_EQ(members[0].pid, 10);
  EXPECT_EQ(members[1].pid, 11);
  EXPECT_EQ(members[2].pid, 13);
  EXPECT_TRUE(util::session_members(all, 99).empty());
}

// The default fork server allowance follows a container's memory limit, not the host's memory.
TEST(CgroupMemoryLimit, TheLowestLimitOfTheCgroupAndItsAncestorsOrOfV1) {
  const auto root =
      std::filesystem::temp_directory_path() / ("portcheck-cgroup-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto write = [&](const std::filesystem::path& file, const std::string& text) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  };
  write(root / "ci" / "memory.max", "17179869184\n");  // the container: 16 GiB
  write(root / "ci" / "job" / "memory.max", "max\n");  // the job itself: none
  write(root / "memory" / "v1" / "memory.limit_in_bytes", "8589934592\n");
  using util::cgroup_memory_limit;
  EXPECT_EQ(cgroup_memory_limit("0::/ci/job\n", root), 17179869184ULL);
  EXPECT_EQ(cgroup_memory_limit("4:memory:/v1\n0::/\n", root), 8589934592ULL);
  EXPECT_EQ(cgroup_memory_limit("0::/elsewhere\n", root), std::nullopt);
  EXPECT_EQ(cgroup_memory_limit("garbage", root), std::nullopt);
  std::filesystem::remove_all(root);
  EXPECT_GT(util::usable_memory_bytes(), 0u);
}
