#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "src/capture/manifest_writer.hpp"

namespace portcheck {

enum class CaptureMode { interpret, record, live };

struct CaptureOptions {
  std::filesystem::path output = "portcheck.toml";
  CaptureMode mode = CaptureMode::interpret;
  MergeMode merge = MergeMode::create;
  bool force = false;                // overwrite an existing output
  std::vector<std::string> command;  // the user's command, run with the hook in its Python
  // `--as`: the devices the command is run as, once each (data/device-personas.toml). Empty: one
  // run, as the real device in live mode and as cuda:90 in the CPU modes.
  std::vector<std::string> personas;
  // `--fake-gpu` (record mode): torch believes in one device of each persona and every tensor is
  // fake, so torch.compile generates its GPU kernels without a GPU (fake_gpu.py).
  bool fake_gpu = false;
  bool quiet = false;
};

// `triton-portcheck capture`: runs the command with a sitecustomize that records every
// specialisation Triton is asked to compile, then writes or merges the manifest. Returns the exit
// code: 0, the command's own failing status (the rows it reached are still written), 1 when
// nothing was launched, 2/130 as elsewhere.
int run_capture(const CaptureOptions& options);

CaptureMode parse_capture_mode(const std::string& text);  // throws UsageError

}  // namespace portcheck
