#pragma once
// A cell as the report tests build them: one shape for the terminal, JSON, JUnit, SARIF and HTML
// tests, so that a new CellResult field is filled in one place.
#include <string>

#include "src/core/cell.hpp"

namespace portcheck::test_support {

inline CellResult cell(const std::string& kernel, const std::string& target,
                       FailureKind kind = FailureKind::none, const std::string& fp = "",
                       const std::string& message = "", const std::string& stage = "") {
  CellResult c;
  c.kernel = c.base_kernel = kernel;
  c.target = target;
  c.triton = "current";
  c.triton_version = "3.9.0";
  c.kind = kind;
  c.status = kind == FailureKind::none ? Status::ok : Status::failed;
  c.is_new = kind != FailureKind::none;
  c.fingerprint = fp;
  c.message = message;
  c.stage = stage;
  c.compile_s = 0.25;
  return c;
}

}  // namespace portcheck::test_support
