// Linked only into the wheel's binary (PORTCHECK_STATIC_RUNTIME). The static libstdc++ of a
// glibc 2.36 toolchain carries std::random_device, whose arc4random() reference alone would raise
// the wheel's glibc floor from 2.34 to 2.36 (manylinux_2_36: no Ubuntu 22.04, no RHEL 9), although
// the tool never uses std::random_device. Defining the function here satisfies that reference
// without the GLIBC_2.36 symbol version; it is a correct arc4random all the same (getrandom(2),
// glibc 2.25), so a future use of std::random_device would still get good randomness.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

extern "C" std::uint32_t arc4random() {
  std::uint32_t value = 0;
  auto* out = reinterpret_cast<unsigned char*>(&value);
  std::size_t filled = 0;
  while (filled < sizeof value) {
    const auto got = ::getrandom(out + filled, sizeof value - filled, 0);
    if (got > 0) {
      filled += static_cast<std::size_t>(got);
    } else if (errno != EINTR) {
      std::abort();  // as glibc's own arc4random does when the kernel has no entropy source
    }
  }
  return value;
}
