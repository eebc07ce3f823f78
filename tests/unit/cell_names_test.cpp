#include "src/core/cell.hpp"

#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace portcheck {
namespace {

TEST(CellNames, EveryStatusAndKindRoundTrips) {
  std::set<std::string_view> names;
  for (const auto& row : kStatuses) {
    EXPECT_EQ(to_string(row.value), row.name);
    EXPECT_EQ(status_from_string(std::string(row.name)), row.value);
    EXPECT_TRUE(names.insert(row.name).second) << "two statuses named " << row.name;
  }
  names.clear();
  std::set<std::string_view> labels;
  for (const auto& row : kFailureKinds) {
    EXPECT_EQ(to_string(row.value), row.name);
    EXPECT_EQ(kind_from_string(std::string(row.name)), row.value);
    EXPECT_EQ(short_label(row.value), row.label);
    EXPECT_TRUE(names.insert(row.name).second) << "two kinds named " << row.name;
    EXPECT_TRUE(labels.insert(row.label).second) << "two kinds labelled " << row.label;
  }
  // Reports and the result cache store these names: they do not change.
  EXPECT_EQ(to_string(FailureKind::none), "");
  EXPECT_EQ(to_string(FailureKind::assembler_error), "assembler-error");
  EXPECT_EQ(short_label(FailureKind::assembler_error), "asm");
  EXPECT_EQ(to_string(Status::unchecked), "unchecked");
  EXPECT_FALSE(status_from_string("passed"));
  EXPECT_FALSE(kind_from_string("ptxas-error"));
}

}  // namespace
}  // namespace portcheck
