// Tests of the real ForkServerRunner against small python3 stand-ins for `portcheck_worker
// serve`, speaking its protocol on fds 3 and 4: what happens when the server dies while it
// answers the probe (issue 14's fault-injection suite found a killed server ended the run).
#include "src/run/fork_server.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "src/core/errors.hpp"
#include "util/fs.hpp"

namespace {

using portcheck::EnvironmentError;
using portcheck::ForkServerConfig;
using portcheck::ForkServerRunner;

// A server that answers the probe (a probe_answer of the protocol's schema) with its generation
// as the worker's folder, after doing `before_answer` (Python statements that may see
// `generation`).
ForkServerConfig fake_server(const util::TempDir& dir, const std::string& before_answer) {
  const std::string script =
      "import json, os, signal, sys\n"
      "generation = int(os.environ['PORTCHECK_SERVER_GENERATION'])\n"
      "events = os.fdopen(4, 'w')\n"
      "for line in os.fdopen(3):\n"
      "    command = json.loads(line)\n"
      "    if command['op'] == 'quit':\n"
      "        break\n"
      "    if command['op'] == 'probe':\n" +
      ("        " + before_answer + "\n") +
      "        answer = {'protocol': command['request']['protocol'], 'worker': str(generation),\n"
      "                  'python': {'version': '3.12.0', 'executable': 'python3'},\n"
      "                  'site_packages': [], 'option_fields': {}, 'targets': [], 'static': None,\n"
      "                  'triton': {'version': '3.6.0', 'path': '/t', 'family': '3.6'},\n"
      "                  'signal_guard_off': None}\n"
      "        events.write(json.dumps({'event': 'probe', 'result': answer}) + '\\n')\n"
      "        events.flush()\n";
  ForkServerConfig config;
  config.argv = {"python3", "-c", script};
  config.cwd = dir.path();
  config.log_dir = dir.path();
  return config;
}

TEST(ForkServerProbe, AServerKilledDuringTheProbeIsReplaced) {
  const util::TempDir dir("fork-server-test");
  ForkServerRunner runner(fake_server(
      dir, "if generation == 1: os.kill(os.getpid(), signal.SIGKILL)  # as by the OOM killer"));
  const auto answer =
      runner.probe({{"targets", nlohmann::json::array()}}, std::chrono::seconds(30));
  EXPECT_EQ(answer.worker, "2");
  EXPECT_EQ(runner.stats().servers_started, 2);
}

TEST(ForkServerProbe, AServerKilledAgainIsAnEnvironmentError) {
  const util::TempDir dir("fork-server-test");
  ForkServerRunner runner(fake_server(dir, "os.kill(os.getpid(), signal.SIGKILL)"));
  EXPECT_THROW(runner.probe({{"targets", nlohmann::json::array()}}, std::chrono::seconds(30)),
               EnvironmentError);
  EXPECT_EQ(runner.stats().servers_started, 2);  // replaced once, not forever
}

TEST(ForkServerProbe, AServerThatExitsByItselfIsNotRetried) {
  // Exit 3 is the worker's "Triton is not usable": an answer, the same on any new server.
  const util::TempDir dir("fork-server-test");
  ForkServerRunner runner(fake_server(dir, "sys.exit(3)"));
  EXPECT_THROW(runner.probe({{"targets", nlohmann::json::array()}}, std::chrono::seconds(30)),
               EnvironmentError);
  EXPECT_EQ(runner.stats().servers_started, 1);
}

}  // namespace
