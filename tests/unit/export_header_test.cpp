#include "src/export/export_header.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/fs.hpp"

namespace portcheck {
namespace {

namespace fs = std::filesystem;

// tests/unit/data/export/axpy_cuda_90: launch.json and axpy.cubin of examples/export/kernels.py's
// axpy (x_ptr, y_ptr, out_ptr: *fp32:16, n: i32:16, a: fp32; BLOCK = 1024), compiled by
// Triton 3.9.0 for cuda:90 with 4 warps.
const fs::path kAxpyDir = fs::path(PORTCHECK_TEST_DATA) / "export" / "axpy_cuda_90";

nlohmann::json read_json(const fs::path& path) {
  return nlohmann::json::parse(std::ifstream(path));
}

std::vector<unsigned char> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The folder holding cuda.h, or empty.
fs::path cuda_include_dir() {
  std::vector<fs::path> candidates;
  if (const char* home = std::getenv("CUDA_HOME"))
    candidates.emplace_back(fs::path(home) / "include");
  if (const char* path = std::getenv("CUDA_PATH"))
    candidates.emplace_back(fs::path(path) / "include");
  candidates.emplace_back("/usr/local/cuda/include");
  candidates.emplace_back("/usr/include");
  for (const auto& dir : candidates)
    if (fs::exists(dir / "cuda.h")) return dir;
  return {};
}

// Runs a command; returns its exit status and fills `output` with stdout + stderr.
int run(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx != nullptr && *cxx != '\0' ? cxx : "g++";
}

// Compiles `source` (a C++17 translation unit) with -fsyntax-only and the given include folder.
void expect_compiles(const fs::path& dir, const std::string& source, const fs::path& include) {
  const auto file = dir / "check.cpp";
  std::ofstream(file) << source;
  std::string output;
  const std::string command = compiler() +
                              " -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I" +
                              include.string() + " -I" + dir.string() + " " + file.string();
  EXPECT_EQ(run(command, output), 0) << command << "\n" << output;
}

// The parameter list of launch(...) in the generated text, whitespace collapsed.
std::string launch_signature(const std::string& header) {
  const auto start = header.find("launch(hip_api::stream_t stream") != std::string::npos
                         ? header.find("launch(hip_api::stream_t stream")
                         : header.find("launch(CUstream stream");
  if (start == std::string::npos) return "";
  const auto end = header.find(')', start);
  return std::regex_replace(header.substr(start, end - start + 1), std::regex(R"(\s+)"), " ");
}

// The bytes of the generated `image` array.
std::vector<unsigned char> embedded_image(const std::string& header) {
  const auto start = header.find("static constexpr unsigned char image[");
  const auto open = header.find('{', start);
  const auto close = header.find("};", open);
  std::vector<unsigned char> bytes;
  const std::string body = header.substr(open + 1, close - open - 1);
  const std::regex byte(R"(0x([0-9a-f]{2}),)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), byte); it != std::sregex_iterator();
       ++it)
    bytes.push_back(static_cast<unsigned char>(std::stoul((*it)[1].str(), nullptr, 16)));
  return bytes;
}

TEST(ExportHeader, RealAxpyDescriptorRendersAndCompiles) {
  const auto descriptor = read_json(kAxpyDir / "launch.json");
  const auto binary = read_bytes(kAxpyDir / "axpy.cubin");
  ASSERT_GT(binary.size(), 1000u);
  const auto header = render_launcher_header(descriptor, binary);
  EXPECT_NE(
      header.find(
          "// portcheck-export: row=axpy target=cuda:90 struct=portcheck_export::axpy_cuda_90"),
      std::string::npos);
  EXPECT_NE(header.find("class axpy_cuda_90 {"), std::string::npos);
  EXPECT_NE(header.find("dlopen(\"libcuda.so.1\""), std::string::npos);
  EXPECT_NE(header.find("static constexpr const char* entry = \"axpy\";"), std::string::npos);
  EXPECT_NE(header.find("threads_per_block = 128;"), std::string::npos);
  // 48 KiB or less: no opt-in attribute, no cluster launch.
  EXPECT_EQ(header.find("cuFuncSetAttribute(function,"), std::string::npos);
  EXPECT_EQ(header.find("d_.cuLaunchKernelEx("), std::string::npos);

  const auto cuda = cuda_include_dir();
  if (cuda.empty()) GTEST_SKIP() << "cuda.h not found (set CUDA_HOME): the compile check needs it";
  util::TempDir dir{"portcheck-export-header-test"};
  std::ofstream(dir.path() / "axpy_launcher.h") << header;
  // Including the header twice, and using the launcher with exactly the typed arguments.
  expect_compiles(
      dir.path(),
      "#include \"axpy_launcher.h\"\n"
      "#include \"axpy_launcher.h\"\n"
      "#include <type_traits>\n"
      "using K = portcheck_export::axpy_cuda_90;\n"
      "static_assert(std::is_same_v<decltype(&K::launch), CUresult (K::*)(CUstream, unsigned, "
      "unsigned,\n"
      "    unsigned, CUdeviceptr, CUdeviceptr, CUdeviceptr, std::int32_t, float) noexcept>);\n"
      "static_assert(K::num_params == 7 && K::num_arguments == 5);\n"
      "static_assert(sizeof(K::image) == K::image_size && alignof(decltype(K::image)) >= 1);\n"
      "int main() {\n"
      "  K k;\n"
      "  CUresult r = k.load();\n"
      "  if (r == CUDA_SUCCESS) r = k.launch(nullptr, 4, 1, 1, 0, 0, 0, 4096, 2.0f);\n"
      "  k.unload();\n"
      "  return r == CUDA_SUCCESS ? 0 : (portcheck_export::error_string(r)[0] != 0);\n"
      "}\n",
      cuda);
}

TEST(ExportHeader, LaunchTakesExactlyTheArgumentParams) {
  const auto descriptor = read_json(kAxpyDir / "launch.json");
  const auto header = render_launcher_header(descriptor, read_bytes(kAxpyDir / "axpy.cubin"));
  EXPECT_EQ(
      launch_signature(header),
      "launch(CUstream stream, unsigned programs_x, unsigned programs_y, unsigned programs_z, "
      "CUdeviceptr x_ptr, CUdeviceptr y_ptr, CUdeviceptr out_ptr, std::int32_t n, float a)");
  // The binary gets every parameter of the descriptor, in order, scratch pointers last.
  EXPECT_NE(
      header.find("void* params_[] = {&x_ptr, &y_ptr, &out_ptr, &n, &a, &global_scratch_ptr_, "
                  "&profile_scratch_ptr_};"),
      std::string::npos);
  EXPECT_NE(header.find("CUdeviceptr global_scratch_ptr_ = 0;"), std::string::npos);
}

TEST(ExportHeader, EmbeddedBytesEqualTheBinary) {
  const auto descriptor = read_json(kAxpyDir / "launch.json");
  const auto binary = read_bytes(kAxpyDir / "axpy.cubin");
  const auto header = render_launcher_header(descriptor, binary);
  EXPECT_EQ(embedded_image(header), binary);
  EXPECT_NE(header.find("image_size = " + std::to_string(binary.size()) + ";"), std::string::npos);
}

// A descriptor made up for the cases the real one does not cover.
nlohmann::json synthetic(const std::string& row, const std::string& target) {
  auto d = read_json(kAxpyDir / "launch.json");
  d["row"] = row;
  d["target"] = target;
  return d;
}

TEST(ExportHeader, IdentifiersAreSanitised) {
  EXPECT_EQ(export_identifier("dot_small[int8]"), "dot_small_int8");
  EXPECT_EQ(export_identifier("attention-fp16[bf16]"), "attention_fp16_bf16");
  EXPECT_EQ(export_identifier("cuda:90"), "cuda_90");
  EXPECT_EQ(export_identifier("hip:gfx942"), "hip_gfx942");
  EXPECT_EQ(export_identifier("3mm.v2+x"), "k3mm_v2_x");
  EXPECT_EQ(export_identifier("__a__b__"), "a_b");
  EXPECT_EQ(export_identifier("[]"), "kernel");
  EXPECT_EQ(launcher_struct_name(synthetic("dot_small[int8]", "cuda:90")),
            "dot_small_int8_cuda_90");

  auto d = synthetic("dot_small[int8]", "cuda:90");
  // Argument names a C++ function cannot take as they are.
  d["params"][0]["name"] = "new";
  d["params"][1]["name"] = "stream";
  d["params"][2]["name"] = "out-ptr";
  d["params"][3]["name"] = "linux";
  const auto header = render_launcher_header(d, read_bytes(kAxpyDir / "axpy.cubin"));
  EXPECT_NE(header.find("class dot_small_int8_cuda_90 {"), std::string::npos);
  EXPECT_NE(header.find("static constexpr const char* row = \"dot_small[int8]\";"),
            std::string::npos);
  EXPECT_EQ(
      launch_signature(header),
      "launch(CUstream stream, unsigned programs_x, unsigned programs_y, unsigned programs_z, "
      "CUdeviceptr new_arg, CUdeviceptr stream_arg, CUdeviceptr out_ptr, std::int32_t linux_arg, "
      "float a)");

  const auto cuda = cuda_include_dir();
  if (cuda.empty()) GTEST_SKIP() << "cuda.h not found (set CUDA_HOME)";
  util::TempDir dir{"portcheck-export-header-test"};
  std::ofstream(dir.path() / "odd.h") << header;
  // Together with a second exported kernel in the same translation unit.
  std::ofstream(dir.path() / "axpy.h") << render_launcher_header(
      read_json(kAxpyDir / "launch.json"), read_bytes(kAxpyDir / "axpy.cubin"));
  expect_compiles(
      dir.path(),
      "#include \"odd.h\"\n#include \"axpy.h\"\n"
      "int main() { portcheck_export::dot_small_int8_cuda_90 a; portcheck_export::axpy_cuda_90 b;\n"
      "  return a.launch(nullptr, 1, 1, 1, 0, 0, 0, 16, 1.0f) + b.launch(nullptr, 1, 1, 1, 0, 0, "
      "0, 16, 1.0f); }\n",
      cuda);
}

TEST(ExportHeader, ScratchClusterAndSharedOptInCompile) {
  auto d = synthetic("axpy", "cuda:90");
  d["num_ctas"] = 2;
  d["cluster_dims"] = {2, 1, 1};
  d["shared_bytes"] = 100000;
  d["needs_shared_opt_in"] = true;
  d["global_scratch"] = {{"size", 256}, {"align", 128}};
  d["profile_scratch"] = {{"size", 64}, {"align", 1024}};
  const auto header = render_launcher_header(d, read_bytes(kAxpyDir / "axpy.cubin"));
  EXPECT_NE(header.find("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"), std::string::npos);
  EXPECT_NE(header.find("CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION"), std::string::npos);
  EXPECT_NE(header.find("value.clusterDim.x = 2;"), std::string::npos);
  EXPECT_NE(header.find("d_.cuLaunchKernelEx(&config_"), std::string::npos);
  EXPECT_EQ(header.find("d_.cuLaunchKernel(this->function_"), std::string::npos);
  EXPECT_NE(header.find("this->reserve_scratch_(this->global_scratch_"), std::string::npos);
  EXPECT_NE(header.find("this->reserve_scratch_(this->profile_scratch_"), std::string::npos);
  // The launch signature does not change: scratch is the launcher's business.
  EXPECT_EQ(
      launch_signature(header),
      "launch(CUstream stream, unsigned programs_x, unsigned programs_y, unsigned programs_z, "
      "CUdeviceptr x_ptr, CUdeviceptr y_ptr, CUdeviceptr out_ptr, std::int32_t n, float a)");
  const auto cuda = cuda_include_dir();
  if (cuda.empty()) GTEST_SKIP() << "cuda.h not found (set CUDA_HOME)";
  util::TempDir dir{"portcheck-export-header-test"};
  std::ofstream(dir.path() / "k.h") << header;
  expect_compiles(dir.path(),
                  "#include \"k.h\"\nint main() { portcheck_export::axpy_cuda_90 k;\n"
                  "  return k.launch(nullptr, 8, 2, 1, 0, 0, 0, 16, 1.0f); }\n",
                  cuda);
}

TEST(ExportHeader, HipHeaderCompilesWithoutHipHeaders) {
  auto d = synthetic("axpy", "hip:gfx942");
  d["backend"] = "hip";
  d["arch"] = "gfx942";
  d["binary"] = "axpy.hsaco";
  d["assembly"] = "axpy.amdgcn";
  d["warp_size"] = 64;
  d["threads_per_block"] = 256;
  d["global_scratch"] = {{"size", 128}, {"align", 16}};
  for (auto& p : d["params"])
    if (p["c_type"] == "CUdeviceptr") p["c_type"] = "hipDeviceptr_t";
  d["params"][3]["c_type"] = "uint16_t";  // an fp16 scalar: raw bits
  d["params"][3]["triton_type"] = "fp16";
  const std::vector<unsigned char> binary = {0x7f, 'E', 'L', 'F', 0, 1, 2, 0xff};
  const auto header = render_launcher_header(d, binary);
  EXPECT_EQ(header.find("#include <cuda.h>"), std::string::npos);
  EXPECT_NE(header.find("class axpy_hip_gfx942 {"), std::string::npos);
  EXPECT_NE(header.find("dlopen(name"), std::string::npos);
  EXPECT_NE(header.find("hipModuleLaunchKernel(this->function_"), std::string::npos);
  EXPECT_EQ(launch_signature(header),
            "launch(hip_api::stream_t stream, unsigned programs_x, unsigned programs_y, unsigned "
            "programs_z, "
            "hip_api::deviceptr_t x_ptr, hip_api::deviceptr_t y_ptr, hip_api::deviceptr_t out_ptr, "
            "std::uint16_t n, float a)");
  EXPECT_EQ(embedded_image(header), binary);
  util::TempDir dir{"portcheck-export-header-test"};
  std::ofstream(dir.path() / "k.h") << header;
  // No HIP headers here (and none needed): the header declares what it uses.
  expect_compiles(
      dir.path(),
      "#include \"k.h\"\nint main() { portcheck_export::axpy_hip_gfx942 k;\n"
      "  auto r = k.launch(nullptr, 8, 1, 1, nullptr, nullptr, nullptr, 0x3c00, 1.0f);\n"
      "  return r == portcheck_export::hip_api::success ? 0 : "
      "(portcheck_export::hip_error_string(r)[0] != 0); }\n",
      dir.path());
}

TEST(ExportHeader, RejectsWhatItCannotLaunch) {
  const auto binary = read_bytes(kAxpyDir / "axpy.cubin");
  auto d = synthetic("axpy", "cuda:90");
  d["params"][0]["c_type"] = "";  // e.g. a tensor descriptor, which export gives no C type
  d["params"][0]["triton_type"] = "tensordesc<fp16[64, 64]>";
  EXPECT_THROW(render_launcher_header(d, binary), std::invalid_argument);
  d = synthetic("axpy", "cuda:90");
  d["backend"] = "metal";
  EXPECT_THROW(render_launcher_header(d, binary), std::invalid_argument);
  d = synthetic("axpy", "cuda:90");
  d["descriptor_version"] = 2;
  EXPECT_THROW(render_launcher_header(d, binary), std::invalid_argument);
  EXPECT_THROW(render_launcher_header(synthetic("axpy", "cuda:90"), {}), std::invalid_argument);
}

}  // namespace
}  // namespace portcheck
