// The tool's side of the worker protocol handshake (the worker's side: tests/integration/
// test_protocol.py).
#include "src/run/python_worker.hpp"

#include <functional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "src/core/errors.hpp"
#include "src/run/worker_protocol.hpp"

namespace portcheck {
namespace {

std::string environment_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const EnvironmentError& e) {
    return e.what();
  }
  return "(no EnvironmentError)";
}

ProcessOutcome exited(int code) {
  ProcessOutcome outcome;
  outcome.how = Termination::exited;
  outcome.exit_code = code;
  return outcome;
}

TEST(WorkerProtocol, TheProbeRequestCarriesIt) {
  const auto request = with_protocol({{"targets", nlohmann::json::array()}});
  EXPECT_EQ(request.at("protocol"), worker_protocol_version());
  EXPECT_TRUE(request.at("targets").is_array());
}

TEST(WorkerProtocol, AnAnswerOfAnotherProtocolIsRefusedWithTheFix) {
  EXPECT_NO_THROW(check_worker_protocol({{"protocol", worker_protocol_version()}}));
  const auto other = environment_error([] {
    check_worker_protocol(
        {{"protocol", worker_protocol_version() + 1}, {"worker", "/opt/w/portcheck_worker"}});
  });
  EXPECT_NE(other.find(fmt::format("triton-portcheck speaks protocol {}, its worker at "
                                   "/opt/w/portcheck_worker speaks {}",
                                   worker_protocol_version(), worker_protocol_version() + 1)),
            std::string::npos)
      << other;
  EXPECT_NE(other.find("reinstall triton-portcheck"), std::string::npos) << other;
  const auto none = environment_error([] { check_worker_protocol({{"python", {}}}); });
  EXPECT_NE(none.find("its worker at (unknown) speaks none"), std::string::npos) << none;
  const auto text = environment_error([] { check_worker_protocol({{"protocol", "1"}}); });
  EXPECT_NE(text.find("speaks \"1\""), std::string::npos) << text;
}

TEST(WorkerProtocol, AnAnswerOfOurProtocolThatBreaksItsSchemaIsOurBug) {
  // The versions match, so the shape is ours to have got right: ProtocolError (exit 4), not the
  // environment's.
  EXPECT_THROW(checked_probe_answer({{"protocol", worker_protocol_version()}}), ProtocolError);
  // Another version is the install's problem, whatever its shape.
  EXPECT_THROW(checked_probe_answer({{"protocol", worker_protocol_version() + 1}}),
               EnvironmentError);
}

TEST(WorkerProtocol, TheWorkersRefusalIsNotMistakenForMissingTriton) {
  const auto refused = environment_error([] {
    throw_probe_failure("/usr/bin/python3", exited(3),
                        "portcheck-worker: protocol mismatch: triton-portcheck speaks protocol 1, "
                        "its worker at /w speaks 2: ...; reinstall triton-portcheck\n");
  });
  EXPECT_TRUE(
      refused.starts_with("protocol mismatch: triton-portcheck speaks protocol 1, its "
                          "worker at /w speaks 2: ...; reinstall triton-portcheck"))
      << refused;
  const auto no_triton = environment_error([] {
    throw_probe_failure("/usr/bin/python3", exited(3),
                        "portcheck-worker: cannot import triton: ModuleNotFoundError: x\n");
  });
  EXPECT_TRUE(
      no_triton.starts_with("Triton is not usable from /usr/bin/python3 (cannot import "
                            "triton: ModuleNotFoundError: x)"))
      << no_triton;
  // Each way of installing the tool gets its own fix: pip users have no Makefile.
  const auto pip = missing_triton_fix("/venv/bin/python", "");
  EXPECT_EQ(pip,
            "install it into that environment with `/venv/bin/python -m pip install triton`, or "
            "give --python (or $VIRTUAL_ENV) an environment that has it");
  EXPECT_EQ(missing_triton_fix("/venv/bin/python", "/src/triton-portcheck"),
            pip +
                "; in this checkout (/src/triton-portcheck), `make demo` sets up .venv with "
                "Triton and uses it");
  // Any other status keeps the worker's whole last line.
  const auto died = environment_error(
      [] { throw_probe_failure("/usr/bin/python3", exited(1), "portcheck-worker: boom\n"); });
  EXPECT_NE(died.find("failed: portcheck-worker: boom"), std::string::npos) << died;
}

}  // namespace
}  // namespace portcheck
