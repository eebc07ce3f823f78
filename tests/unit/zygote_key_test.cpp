// The zygote key, decided by the tool alone (check/zygote_key.hpp): the worker keys its zygotes by
// what a request carries, and the scheduler groups and batches cells by the same key.
#include "src/check/zygote_key.hpp"

#include <gtest/gtest.h>

namespace portcheck {
namespace {

KernelRef module_ref(const std::string& module) {
  KernelRef ref;
  ref.module = module;
  ref.function = "k";
  ref.import_root = "/src";
  return ref;
}

TEST(ZygoteKey, ModulesOfOnePackageShareOneZygotePerTarget) {
  EXPECT_EQ(zygote_key(module_ref("liger.ops.rope"), "cuda:90"),
            zygote_key(module_ref("liger.ops.swiglu"), "cuda:90"));
  EXPECT_NE(zygote_key(module_ref("liger.ops.rope"), "cuda:90"),
            zygote_key(module_ref("liger.ops.rope"), "hip:gfx942"));
  EXPECT_NE(zygote_key(module_ref("liger.ops.rope"), "cuda:90"),
            zygote_key(module_ref("flag_gems.ops"), "cuda:90"));
  auto elsewhere = module_ref("liger.ops.rope");
  elsewhere.python_path = {"/vendor"};
  EXPECT_NE(zygote_key(elsewhere, "cuda:90"), zygote_key(module_ref("liger.ops.rope"), "cuda:90"));
}

TEST(ZygoteKey, KernelsCaptureSavedShareTheirFoldersZygote) {
  KernelRef first;
  first.file = std::filesystem::path("/m") / kGeneratedFolder / "a.py";
  first.import_root = "/m";
  auto second = first;
  second.file = std::filesystem::path("/m") / kGeneratedFolder / "b.py";
  EXPECT_EQ(zygote_key(first, "cuda:90"), zygote_key(second, "cuda:90"));
  auto plain = first;
  plain.file = "/m/a.py";
  auto other = first;
  other.file = "/m/b.py";
  EXPECT_NE(zygote_key(plain, "cuda:90"), zygote_key(other, "cuda:90"));
}

TEST(ZygoteKey, ARequestCarriesItsKeyAndTheTargetFreeOne) {
  const auto member = zygote_member(module_ref("liger.ops.rope"), "cuda:90");
  EXPECT_EQ(member.at("key"), zygote_key(module_ref("liger.ops.rope"), "cuda:90"));
  EXPECT_EQ(member.at("any_target"), zygote_key(module_ref("liger.ops.rope"), ""));
  const auto inspection = zygote_member(module_ref("liger.ops.rope"), "");
  EXPECT_EQ(inspection.at("key"), inspection.at("any_target"));
  EXPECT_TRUE(zygote_member(module_ref(""), "cuda:90").is_null()) << "nothing to import: no zygote";
}

}  // namespace
}  // namespace portcheck
