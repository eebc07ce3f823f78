#include "src/run/batch_log.hpp"

#include <chrono>
#include <fstream>

#include <gtest/gtest.h>

#include "util/fs.hpp"

namespace portcheck {
namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TEST(BatchLog, MarksParseAndAnythingElseIsSkipped) {
  BatchMark mark;
  ASSERT_TRUE(parse_batch_mark("begun 12 " + std::to_string(seconds_now() - 1) + " 3", mark));
  EXPECT_EQ(mark.kind, BatchMark::Kind::begun);
  EXPECT_EQ(mark.id, 12u);
  EXPECT_EQ(mark.figure, 3u);
  ASSERT_TRUE(parse_batch_mark("done 3 0.5 104857600", mark));
  EXPECT_EQ(mark.kind, BatchMark::Kind::done);
  EXPECT_EQ(mark.figure, 104857600u);
  for (const char* line : {"", "begun", "begun 1", "began 1 2 1", "done x 2 1", "done 1 nan 1",
                           "done 1 -3 1", "done 1 2", "done 1 2 3 4", "done 1 2x 1", "done -1 2 1",
                           "done 1 2 -5", "done 1 2 5x", "done 1 2 99999999999999999999"})
    EXPECT_FALSE(parse_batch_mark(line, mark)) << line;
  // A time later than now is no time the process saw: now.
  ASSERT_TRUE(parse_batch_mark("done 1 " + std::to_string(seconds_now() + 3600) + " 0", mark));
  EXPECT_LE(mark.at, std::chrono::steady_clock::now());
}

TEST(BatchLogReader, ReadsWholeLinesAsTheyComeAndBoundsAnEndlessOne) {
  util::TempDir dir("batch-log-test");
  const auto path = dir.path() / "batch.log";
  BatchLogReader reader(path);
  EXPECT_TRUE(reader.read_new().empty());
  std::ofstream out(path, std::ios::app);
  out << "begun 1 1.0 1\ndone 1 2.0 5\nbeg" << std::flush;
  auto marks = reader.read_new();
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[1].kind, BatchMark::Kind::done);
  out << "un 2 3.0 1\ngarbage\n" << std::flush;
  marks = reader.read_new();
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].id, 2u);
  out << std::string(10000, 'x') << std::flush;  // a cell writing without end
  EXPECT_TRUE(reader.read_new().empty());
  out << "\ndone 2 4.0 5\n" << std::flush;
  marks = reader.read_new();
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].id, 2u);
}

}  // namespace
}  // namespace portcheck
