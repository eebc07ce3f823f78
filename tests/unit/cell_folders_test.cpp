#include "src/core/cell_folders.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace portcheck {
namespace {

// Issue 14: "." and ".." as kernel names made export -o and --save-ir write outside the output
// folder, and "scale[b]" and "scale-b" shared one folder, the second overwriting the first.
TEST(CellFolders, NeverEscapeTheFolder) {
  const std::vector<std::string> names{
      ".", "..", "", "../x", "a/../../b", "/abs", ".hidden", std::string(5000, 'k'), "a\nb"};
  for (const auto& name : names) {
    const auto folder = ir_row_folder(name);
    EXPECT_FALSE(folder.empty()) << name;
    EXPECT_NE(folder, ".");
    EXPECT_NE(folder, "..");
    EXPECT_NE(folder.front(), '.') << folder;
    EXPECT_EQ(folder.find('/'), std::string::npos) << folder;
    EXPECT_LE(folder.size(), kMaxPlainFolder + 9) << folder;
    EXPECT_EQ(ir_target_folder(name).find('/'), std::string::npos);
    EXPECT_NE(ir_target_folder(name), "..");
  }
}

TEST(CellFolders, DistinctNamesGetDistinctFolders) {
  std::set<std::string> folders;
  for (const char* name : {"scale[b]", "scale-b", "scale_b", "scale b", "scale/b", "scale.b",
                           "scale[b", "scale]b", "scaleb", "Scale-b"})
    EXPECT_TRUE(folders.insert(ir_row_folder(name)).second)
        << name << " -> " << ir_row_folder(name);
  std::set<std::string> long_ones;
  EXPECT_TRUE(long_ones.insert(ir_row_folder(std::string(300, 'a') + "x")).second);
  EXPECT_TRUE(long_ones.insert(ir_row_folder(std::string(300, 'a') + "y")).second);
}

TEST(CellFolders, PlainNamesStayReadable) {
  EXPECT_EQ(ir_row_folder("axpy"), "axpy");
  EXPECT_EQ(ir_row_folder("attention-fp16"), "attention-fp16");
  EXPECT_TRUE(ir_row_folder("attention-fp16[bf16]").starts_with("attention-fp16-bf16~"));
  EXPECT_EQ(ir_row_folder("dot_small[int8]").size(), std::string("dot_small-int8~").size() + 8);
  EXPECT_EQ(ir_target_folder("cuda:90"), "cuda_90");
  EXPECT_EQ(ir_target_folder("hip:gfx942"), "hip_gfx942");
  EXPECT_EQ(ir_target_folder("3.9.0"), "3.9.0");
  EXPECT_EQ(ir_target_folder("current"), "current");
  EXPECT_NE(ir_target_folder("cuda:90"), ir_target_folder("cuda_90:"));
}

}  // namespace
}  // namespace portcheck
