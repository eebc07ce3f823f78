#include "src/core/cell.hpp"

namespace portcheck {

std::string to_string(Status status) {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::failed:
      return "failed";
    case Status::xfail:
      return "xfail";
    case Status::xpass:
      return "xpass";
    case Status::launch:
      return "launch";
    case Status::unchecked:
      return "unchecked";
  }
  return "?";
}

std::string to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::none:
      return "";
    case FailureKind::frontend_error:
      return "frontend-error";
    case FailureKind::mlir_error:
      return "mlir-error";
    case FailureKind::llvm_error:
      return "llvm-error";
    case FailureKind::assembler_error:
      return "assembler-error";
    case FailureKind::timeout:
      return "timeout";
    case FailureKind::crash:
      return "crash";
    case FailureKind::oom:
      return "oom";
    case FailureKind::import_error:
      return "import-error";
    case FailureKind::internal_error:
      return "internal-error";
    case FailureKind::predicted:
      return "predicted";
    case FailureKind::launch_limit:
      return "launch-limit";
  }
  return "?";
}

std::optional<Status> status_from_string(const std::string& text) {
  for (const auto s : {Status::ok, Status::failed, Status::xfail, Status::xpass, Status::launch,
                       Status::unchecked})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

std::optional<FailureKind> kind_from_string(const std::string& text) {
  for (const auto k :
       {FailureKind::none, FailureKind::frontend_error, FailureKind::mlir_error,
        FailureKind::llvm_error, FailureKind::assembler_error, FailureKind::timeout,
        FailureKind::crash, FailureKind::oom, FailureKind::import_error,
        FailureKind::internal_error, FailureKind::predicted, FailureKind::launch_limit})
    if (to_string(k) == text) return k;
  return std::nullopt;
}

std::string short_label(FailureKind kind) {
  switch (kind) {
    case FailureKind::none:
      return "ok";
    case FailureKind::frontend_error:
      return "front";
    case FailureKind::mlir_error:
      return "mlir";
    case FailureKind::llvm_error:
      return "llvm";
    case FailureKind::assembler_error:
      return "asm";
    case FailureKind::timeout:
      return "timeout";
    case FailureKind::crash:
      return "crash";
    case FailureKind::oom:
      return "oom";
    case FailureKind::import_error:
      return "import";
    case FailureKind::internal_error:
      return "internal";
    case FailureKind::predicted:
      return "pred";
    case FailureKind::launch_limit:
      return "launch";
  }
  return "?";
}

}  // namespace portcheck
