#include "src/check/zygote_key.hpp"

#include <fmt/format.h>

namespace portcheck {

std::string zygote_key(const KernelRef& ref, std::string_view target) {
  std::string unit = ref.module.substr(0, ref.module.find('.'));
  if (!ref.file.empty())
    unit = ref.file.parent_path().filename() == kGeneratedFolder ? ref.file.parent_path().string()
                                                                 : ref.file.string();
  if (unit.empty()) return {};
  std::string folders = ref.import_root.string();
  for (const auto& folder : ref.python_path) folders += ":" + folder.string();
  return fmt::format("{}|{}|{}", target.empty() ? "*" : target, folders, unit);
}

nlohmann::json zygote_member(const KernelRef& ref, std::string_view target) {
  const auto key = zygote_key(ref, target);
  if (key.empty()) return nullptr;
  return {{"key", key}, {"any_target", zygote_key(ref, "")}};
}

nlohmann::json fork_route(std::string_view kind, const KernelRef& ref, const Target* target) {
  auto zygote = zygote_member(ref, target != nullptr ? target->name() : "");
  if (zygote.is_null()) return nullptr;
  return {{"kind", kind},
          {"zygote", std::move(zygote)},
          {"kernel", kernel_ref_json(ref)},
          {"target", target != nullptr ? nlohmann::json(*target) : nlohmann::json()}};
}

}  // namespace portcheck
