// The manifest parser: any bytes in portcheck.toml are a manifest or one UsageError (exit 2),
// never another exception, a crash or a sanitizer finding. A kernels.py beside it lets rows that
// name it get past the file check into the signature, constants and specialization checks.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "src/core/errors.hpp"
#include "src/core/manifest.hpp"
#include "util/fs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const util::TempDir dir = [] {
    util::TempDir d("portcheck-fuzz-manifest");
    std::ofstream(d.path() / "kernels.py") << "# kernels\n";
    std::filesystem::create_directory(d.path() / "src");
    return d;
  }();
  const auto file = dir.path() / "portcheck.toml";
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    const auto manifest = portcheck::load_manifest(file);
    for (const auto& row : manifest.rows) (void)row.signature.dump();
  } catch (const portcheck::UsageError&) {
  }
  return 0;
}
