// Launches two Triton kernels exported by `triton-portcheck export` (examples/export/kernels.py)
// from plain C++, checks them against CPU references, and optionally times the launches.
//
//   export_example [--bench N] [--device I] [--dump DIR]
// --dump writes every input and output as raw little-endian arrays (and sizes.txt), so that the
// same data can be run through Triton's own launch and compared (bench/h200/export_compare.py).
//
// Exit code 0: both kernels within tolerance; 1: a result out of tolerance; 2: a CUDA error
// (no driver or GPU included); 3: bad arguments.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "exported_kernels.hpp"  // the exported headers, found by CMake under EXPORT_DIR

namespace {

using portcheck_export::cuda_driver;
using portcheck_export::error_string;

#define CHECK_CU(call)                                                               \
  do {                                                                               \
    const CUresult check_result_ = (call);                                           \
    if (check_result_ != CUDA_SUCCESS) {                                             \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, \
                   error_string(check_result_), static_cast<int>(check_result_));    \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

// IEEE binary16 <-> float, round to nearest even (what the kernels' fp16 values are).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h >> 15) & 1u, exponent = (h >> 10) & 31u, mantissa = h & 1023u;
  float value;
  if (exponent == 0)
    value = std::ldexp(static_cast<float>(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? NAN : INFINITY;
  else
    value = std::ldexp(static_cast<float>(mantissa | 1024u), static_cast<int>(exponent) - 25);
  return sign ? -value : value;
}

std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00u;
  if (a >= 65520.0f) return sign | 0x7c00u;  // rounds to infinity
  if (a < std::ldexp(1.0f, -14)) {           // subnormal (or zero): multiples of 2^-24
    const float scaled = std::nearbyint(a * std::ldexp(1.0f, 24));
    return sign | static_cast<std::uint16_t>(scaled);
  }
  int e;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  std::uint32_t bits = static_cast<std::uint32_t>(std::nearbyint(std::ldexp(m, 11)));  // 1024..2048
  int exponent = e - 1 + 15;
  if (bits == 2048) {
    bits = 1024;
    ++exponent;
  }
  if (exponent >= 31) return sign | 0x7c00u;
  return sign | static_cast<std::uint16_t>((exponent << 10) | (bits & 1023u));
}

// A device buffer through the dlopen'd driver.
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
  explicit DeviceBuffer(std::size_t n) : bytes(n) { CHECK_CU(cuda_driver().cuMemAlloc(&ptr, n)); }
  ~DeviceBuffer() {
    if (ptr) cuda_driver().cuMemFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  void upload(const std::vector<T>& host) {
    CHECK_CU(cuda_driver().cuMemcpyHtoD(ptr, host.data(), host.size() * sizeof(T)));
  }
  template <class T>
  void download(std::vector<T>& host) {
    CHECK_CU(cuda_driver().cuMemcpyDtoH(host.data(), ptr, host.size() * sizeof(T)));
  }
};

template <class Launch>
void bench(const char* name, int iterations, Launch launch) {
  CHECK_CU(launch());  // warm-up
  CHECK_CU(cuda_driver().cuCtxSynchronize());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) CHECK_CU(launch());
  const auto launched = std::chrono::steady_clock::now();
  CHECK_CU(cuda_driver().cuCtxSynchronize());
  const auto done = std::chrono::steady_clock::now();
  using us = std::chrono::duration<double, std::micro>;
  std::printf(
      "bench %-22s %d launches: %.3f us host time per launch (loop %.1f us), %.3f us per launch "
      "including the final cuCtxSynchronize\n",
      name, iterations, us(launched - start).count() / iterations, us(launched - start).count(),
      us(done - start).count() / iterations);
}

}  // namespace

template <typename T>
void dump(const std::string& dir, const char* name, const std::vector<T>& values) {
  if (dir.empty()) return;
  std::FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(values.data(), sizeof(T), values.size(), f);
  std::fclose(f);
}

int main(int argc, char** argv) {
  int bench_iterations = 0;
  std::string dump_dir;
  int device_index = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--dump" && i + 1 < argc) {
      dump_dir = argv[++i];
      continue;
    }
    if ((arg == "--bench" || arg == "--device") && i + 1 < argc) {
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 0 || value > 100000000) {
        std::fprintf(stderr, "%s wants a non-negative integer, got '%s'\n", arg.c_str(), argv[i]);
        return 3;
      }
      (arg == "--bench" ? bench_iterations : device_index) = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "usage: %s [--bench N] [--device I] [--dump DIR]\n", argv[0]);
      return arg == "-h" || arg == "--help" ? 0 : 3;
    }
  }

  const auto& d = cuda_driver();
  if (!d.ok()) {
    std::fprintf(stderr, "CUDA driver not usable: %s\n", d.message);
    return 2;
  }
  CUdevice device;
  CHECK_CU(d.cuDeviceGet(&device, device_index));
  char device_name[256] = {};
  CHECK_CU(d.cuDeviceGetName(device_name, sizeof device_name, device));
  int major = 0, minor = 0;
  CHECK_CU(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  CHECK_CU(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  std::printf("device %d: %s (compute capability %d.%d)\n", device_index, device_name, major,
              minor);
  std::printf("kernels: %s (%s), %s (%s)\n", AxpyKernel::row, AxpyKernel::target,
              DequantMatvecKernel::row, DequantMatvecKernel::target);
  CUcontext context;
  CHECK_CU(d.cuDevicePrimaryCtxRetain(&context, device));
  CHECK_CU(d.cuCtxSetCurrent(context));

  bool all_ok = true;
  std::mt19937 rng(20240601u);
  {
    AxpyKernel axpy;
    DequantMatvecKernel matvec;
    CHECK_CU(axpy.load());
    CHECK_CU(matvec.load());
    CUstream stream = nullptr;  // the legacy default stream

    // ---- axpy: out = a * x + y (fp32). n is a multiple of 16 (the row's "n = i32:16") but not of
    // BLOCK = 1024, so the last program runs masked.
    const std::int32_t n = 1000000;
    const float a = 1.75f;
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> x(n), y(n), out(n, 0.0f);
    for (auto& v : x) v = uniform(rng);
    for (auto& v : y) v = uniform(rng);
    DeviceBuffer dx(n * sizeof(float)), dy(n * sizeof(float)), dout(n * sizeof(float));
    dx.upload(x);
    dy.upload(y);
    const unsigned axpy_programs = static_cast<unsigned>((n + 1023) / 1024);  // BLOCK = 1024
    CHECK_CU(axpy.launch(stream, axpy_programs, 1, 1, dx.ptr, dy.ptr, dout.ptr, n, a));
    CHECK_CU(d.cuCtxSynchronize());
    dout.download(out);
    double axpy_err = 0.0;
    for (std::int32_t i = 0; i < n; ++i)
      axpy_err = std::max(axpy_err,
                          std::fabs(static_cast<double>(out[i]) -
                                    (static_cast<double>(a) * x[i] + static_cast<double>(y[i]))));
    const double axpy_tol = 1e-6;  // one fp32 rounding of values below 4
    const bool axpy_ok = axpy_err <= axpy_tol;
    std::printf("axpy:                n=%d  max abs error %.3g (tolerance %.1g)  %s\n", n, axpy_err,
                axpy_tol, axpy_ok ? "ok" : "FAILED");
    all_ok = all_ok && axpy_ok;
    dump(dump_dir, "axpy_x.f32", x);
    dump(dump_dir, "axpy_y.f32", y);
    dump(dump_dir, "axpy_out.f32", out);

    // ---- 4-bit dequantising matvec: y = W x, W packed 8 weights per int32 word along K, with a
    // per-group (GROUP_SIZE = 128) fp16 scale and zero point; fp16 activations and result.
    // N, K multiples of 16 (the row's ":16"); K a multiple of 128 but not of BLOCK_SIZE = 1024.
    const std::int32_t N = 2048, K = 4480, group_size = 128;
    const std::int32_t words = K / 8, groups = K / group_size;
    std::vector<std::uint32_t> qweight(static_cast<std::size_t>(N) * words);
    std::vector<std::uint16_t> scales(static_cast<std::size_t>(N) * groups), zeros(scales.size());
    std::vector<std::uint16_t> xh(K), yh(N, 0);
    for (auto& w : qweight) w = static_cast<std::uint32_t>(rng());
    std::uniform_real_distribution<float> scale_dist(0.002f, 0.01f), zero_dist(6.0f, 9.0f);
    for (auto& s : scales) s = float_to_half(scale_dist(rng));
    for (auto& z : zeros) z = float_to_half(zero_dist(rng));
    for (auto& v : xh) v = float_to_half(uniform(rng));
    DeviceBuffer dq(qweight.size() * 4), ds(scales.size() * 2), dz(zeros.size() * 2),
        dxh(xh.size() * 2), dyh(yh.size() * 2);
    dq.upload(qweight);
    ds.upload(scales);
    dz.upload(zeros);
    dxh.upload(xh);
    CHECK_CU(matvec.launch(stream, static_cast<unsigned>(N), 1, 1, dq.ptr, ds.ptr, dz.ptr, dxh.ptr,
                           dyh.ptr, N, K));
    CHECK_CU(d.cuCtxSynchronize());
    dyh.download(yh);
    double matvec_err = 0.0, worst_ratio = 0.0, largest = 0.0;
    for (std::int32_t r = 0; r < N; ++r) {
      double sum = 0.0;
      for (std::int32_t k = 0; k < K; ++k) {
        const std::uint32_t q =
            (qweight[static_cast<std::size_t>(r) * words + k / 8] >> (4 * (k % 8))) & 0xFu;
        const std::size_t g = static_cast<std::size_t>(r) * groups + k / group_size;
        const double w =
            (static_cast<double>(q) - half_to_float(zeros[g])) * half_to_float(scales[g]);
        sum += w * half_to_float(xh[k]);
      }
      const double err = std::fabs(static_cast<double>(half_to_float(yh[r])) - sum);
      // fp16 result: half an ulp is 2^-11 relative; allow 2 ulps plus fp32 summation error.
      const double tol = 1e-3 * std::max(1.0, std::fabs(sum));
      matvec_err = std::max(matvec_err, err);
      worst_ratio = std::max(worst_ratio, err / tol);
      largest = std::max(largest, std::fabs(sum));
    }
    const bool matvec_ok = worst_ratio <= 1.0;
    std::printf(
        "dequant_matvec_4bit: N=%d K=%d  max abs error %.3g (tolerance 1e-3 * max(1, |y|), |y| up "
        "to "
        "%.3g; worst error/tolerance %.3f)  %s\n",
        N, K, matvec_err, largest, worst_ratio, matvec_ok ? "ok" : "FAILED");
    all_ok = all_ok && matvec_ok;
    dump(dump_dir, "matvec_qweight.u32", qweight);
    dump(dump_dir, "matvec_scales.f16", scales);
    dump(dump_dir, "matvec_zeros.f16", zeros);
    dump(dump_dir, "matvec_x.f16", xh);
    dump(dump_dir, "matvec_y.f16", yh);
    if (!dump_dir.empty()) {
      std::FILE* f = std::fopen((dump_dir + "/sizes.txt").c_str(), "w");
      if (f != nullptr) {
        std::fprintf(f, "axpy_n %d\naxpy_a %.9g\nmatvec_N %d\nmatvec_K %d\ngroup_size %d\n", n, a,
                     N, K, group_size);
        std::fclose(f);
      }
    }

    if (bench_iterations > 0) {
      bench("axpy", bench_iterations, [&] {
        return axpy.launch(stream, axpy_programs, 1, 1, dx.ptr, dy.ptr, dout.ptr, n, a);
      });
      bench("dequant_matvec_4bit", bench_iterations, [&] {
        return matvec.launch(stream, static_cast<unsigned>(N), 1, 1, dq.ptr, ds.ptr, dz.ptr,
                             dxh.ptr, dyh.ptr, N, K);
      });
    }
    // The kernels and buffers are released here, while the context is still current.
  }
  CHECK_CU(d.cuDevicePrimaryCtxRelease(device));
  std::printf("%s\n", all_ok ? "all results within tolerance" : "SOME RESULTS OUT OF TOLERANCE");
  return all_ok ? 0 : 1;
}
