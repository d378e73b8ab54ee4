// The CUDA EP on a GPU (issue 44, docs/gpu.md): what the reports say there.
// Each test skips, saying why, where parity's ORT has no CUDA EP (every
// machine but a GPU one with onnxruntime-gpu: scripts/gpu-check.sh runs them).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "e2e_util.h"
#include "onnx/builder.h"
#include "onnx/builtin_models.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

bool HasCuda() { return e2e::RunParity({"env"}).out.find("CUDAExecutionProvider") != std::string::npos; }

#define SKIP_WITHOUT_CUDA()                                                                                  \
  if (!HasCuda())                                                                                            \
  GTEST_SKIP() << "this ONNX Runtime has no CUDA EP (PARITY_ORT_LIBRARY: onnxruntime-gpu's, "                 \
                  "scripts/gpu-setup.sh); scripts/gpu-check.sh runs these on a GPU"

using e2e::ReadJson;

// y = x @ W with x [64, 4096], W [4096, 256] of N(0, 1) values. TF32 keeps 10
// bits of each operand's mantissa: over 4096 terms an element moves by about
// 2^-11 * sqrt(4096) * rms(y)/64 ~ 5e-4 of rms(y), elements near 0 far beyond
// the default band (1e-4 * rms + 1e-3 * |y|); float32's reordered sums stay
// 100 times inside it.
Model LongMatMul() {
  ModelBuilder b;
  const std::string x = b.Input("x", DType::kFloat32, Shape{64, 4096});
  b.Output(b.MatMul(x, b.RandomWeight("w", Shape{4096, 256}, 1.0f)), "y");
  return *b.Build("long_matmul");
}

TEST(CudaGpu, Tf32IsNamedOnlyBecauseTheRerunWithoutItPasses) {
  SKIP_WITHOUT_CUDA();
  e2e::TempDir dir("parity_tf32");
  ASSERT_TRUE(LongMatMul().Save(dir.path() / "m.onnx").has_value());
  auto tf32 = e2e::RunParity({"check", (dir.path() / "m.onnx").string(), "--providers", "cuda", "--json",
                              (dir.path() / "on.json").string()});
  ASSERT_EQ(tf32.exit_code, 1) << tf32.out << tf32.err;
  const auto on = ReadJson(dir.path() / "on.json");
  ASSERT_TRUE(on["arithmetic"].is_object()) << on["tf32_probe"];
  EXPECT_EQ(on["arithmetic"]["arithmetic"], "tf32");
  EXPECT_EQ(on["arithmetic"]["fix"], "run fp32 with --provider-option cuda:use_tf32=0");
  EXPECT_NE(on["tf32_probe"].get<std::string>().find("TF32 is the cause"), std::string::npos);
  auto fp32 = e2e::RunParity({"check", (dir.path() / "m.onnx").string(), "--providers", "cuda", "--provider-option",
                              "cuda:use_tf32=0", "--json", (dir.path() / "off.json").string()});
  EXPECT_EQ(fp32.exit_code, 0) << fp32.out << fp32.err;
  EXPECT_TRUE(ReadJson(dir.path() / "off.json")["tf32_probe"].is_null());
}

TEST(CudaGpu, AReportListsTheCudaNodesAndTheArenaPeak) {
  SKIP_WITHOUT_CUDA();
  e2e::TempDir dir("parity_cuda_mem");
  ASSERT_TRUE(ConvBnRelu().Save(dir.path() / "m.onnx").has_value());
  auto r = e2e::RunParity({"check", (dir.path() / "m.onnx").string(), "--providers", "cuda", "--provider-option",
                           "cuda:use_tf32=0", "--json", (dir.path() / "r.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = ReadJson(dir.path() / "r.json");
  bool cuda_nodes = false;
  for (const auto& a : j["target_assignment"])
    cuda_nodes = cuda_nodes || (a["ep"] == "CUDAExecutionProvider" && !a["nodes"].empty());
  EXPECT_TRUE(cuda_nodes) << j["target_assignment"];
  const auto& target = j["performance"].back();
  ASSERT_TRUE(target["gpu_peak_bytes"].is_number_integer()) << target;
  // The input (1x3x224x224) and output (1x16x224x224) float32 tensors alone are 3.8 MB.
  EXPECT_GT(target["gpu_peak_bytes"].get<int64_t>(), 3'000'000);
  EXPECT_TRUE(j["performance"].front()["gpu_peak_bytes"].is_null()) << "the CPU reference has no GPU arena";
}

// A provider that cannot be loaded (the CUDA EP in a CPU build of ORT; on a
// GPU machine, the TensorRT EP without libnvinfer) is a setup mistake: one
// line, exit 2, before any model is read; never a FAIL verdict (exit 1).
TEST(CudaGpu, AProviderThatCannotBeLoadedIsOneLineAndExit2) {
  const std::string provider = HasCuda() ? "tensorrt" : "cuda";
  e2e::TempDir dir("parity_no_provider");
  ASSERT_TRUE(ConvBnRelu().Save(dir.path() / "m.onnx").has_value());
  for (const char* role : {"--providers", "--reference-config"}) {
    std::vector<std::string> args{"check", (dir.path() / "m.onnx").string()};
    if (std::string(role) == "--reference-config") {
      std::ofstream(dir.path() / "ref.json") << R"({"opt": "disable", "providers": [")" << provider << R"("]})";
      args.insert(args.end(), {"--reference-config", (dir.path() / "ref.json").string()});
    } else {
      args.insert(args.end(), {"--providers", provider});
    }
    auto r = e2e::RunParity(args);
    if (r.exit_code == 0 || r.exit_code == 1) GTEST_SKIP() << provider << "'s libraries load here: the EP ran";
    EXPECT_EQ(r.exit_code, 2) << role << ": " << r.err;
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(provider), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace parity
