// A model whose weights are external data (issue 26), through the real
// binary: `run`, `check`, `baseline` and `locate` read the weights in place
// (ORT from the data file, never a copy parity inlined first), so the peak
// RSS of each stays under a bound that the inlining code passed, and each
// reads the data through the folder it lies in, whatever the working
// directory (the modified models ORT loads as bytes: every-layer exposure).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "core/npy.h"
#include "e2e_util.h"
#include "onnx/builder.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

constexpr int kLayers = 8;
constexpr int64_t kDim = 2048;
constexpr int64_t kWeightBytes = kLayers * kDim * kDim * 4;  // 128 MiB

// kLayers MatMul layers of [kDim, kDim] weights, Relu and Tanh between them,
// saved as m.onnx + m.onnx.data in `dir`.
void WriteMatMulStack(const fs::path& dir) {
  ModelBuilder b;
  std::string x = b.Input("x", DType::kFloat32, {1, kDim});
  for (int i = 0; i < kLayers; ++i) {
    x = b.MatMul(x, b.RandomWeight("w" + std::to_string(i), {kDim, kDim}, 1.0f / 45.0f));
    x = i % 2 == 0 ? b.Relu(x) : b.Tanh(x);
  }
  b.Output(x, "y");
  auto m = b.Build();
  ASSERT_TRUE(m) << m.error().message();
  ASSERT_TRUE(m->Save(dir / "m.onnx", {.external_data = SaveOptions::ExternalData::kAlways}));
  Tensor in(DType::kFloat32, {1, kDim});
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0, 1);
  for (float& v : in.mutable_view<float>()) v = dist(rng);
  ASSERT_TRUE(WriteNpy(dir / "x.npy", in));
}

class ExternalDataCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new e2e::TempDir("parity_ext_e2e");
    WriteMatMulStack(dir_->path());
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string P(const std::string& name) { return (dir_->path() / name).string(); }

  // Runs parity, expects exit 0, and checks its peak RSS: at most the process
  // without a model (kBaseBytes) plus `weights_times` the weights.
  static e2e::ProcessResult ExpectBounded(const std::vector<std::string>& args, double weights_times) {
    const auto r = e2e::RunParity(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const double allowed = kBaseBytes + weights_times * kWeightBytes;
    std::printf(
        "[ memory   ] parity %s: peak %.1f MiB for %.0f MiB of weights (allowed %.1f MiB), %.1f MiB written, "
        "%.2f s\n",
        args[0].c_str(), r.peak_rss_bytes / 1048576.0, kWeightBytes / 1048576.0, allowed / 1048576.0,
        r.written_bytes / 1048576.0, r.wall_seconds);
    if (!e2e::kSanitized) EXPECT_LT(r.peak_rss_bytes, allowed) << args[0];  // else e2e::kRssUnderAsan
    return r;
  }

  static constexpr double kBaseBytes = 160.0 * 1048576;  // parity + ORT loaded, no model
  static e2e::TempDir* dir_;
};

e2e::TempDir* ExternalDataCli::dir_ = nullptr;

TEST_F(ExternalDataCli, RunReadsTheWeightsInPlace) {
  // One session, ORT reading the file: one copy of the weights at most
  // (before, the proto's inlined copy too: 309 MiB here).
  ExpectBounded({"run", P("m.onnx"), "--inputs", P("x.npy"), "-o", P("run_out.npz")}, 1.0);
  EXPECT_TRUE(fs::exists(P("run_out.npz")));
}

TEST_F(ExternalDataCli, RunOfEveryTensorReadsTheDataFromItsFolder) {
  // The exposed model goes to ORT as bytes; its data is found in the model's
  // folder, not the working directory.
  ExpectBounded({"run", P("m.onnx"), "--inputs", P("x.npy"), "-o", P("all_out.npz"), "--all-tensors"}, 1.3);
  EXPECT_TRUE(fs::exists(P("all_out.npz")));
}

// A passing check and a locate that finds nothing write no optimized-model
// weights: ORT's optimized model (for the fused plan) is saved with its
// initializers going to /dev/null. Before, each plan wrote the weights once.
TEST_F(ExternalDataCli, CheckPassesWithinTwoAndAHalfTimesTheWeightsWritingNoWeights) {
  const auto r = ExpectBounded({"check", P("m.onnx"), "--inputs", P("x.npy"), "--runs", "2", "--warmup", "1"}, 2.5);
  EXPECT_LT(r.written_bytes, kWeightBytes / 8);
}

TEST_F(ExternalDataCli, BaselineAndLocateReadTheWeightsInPlaceWritingNoWeights) {
  ExpectBounded({"baseline", P("m.onnx"), "--inputs", P("x.npy"), "-o", P("bl")}, 1.3);
  EXPECT_TRUE(fs::exists(P("bl/manifest.json")));
  const auto r = ExpectBounded({"locate", P("m.onnx"), "--inputs", P("x.npy"), "--no-ablation"}, 2.5);
  EXPECT_LT(r.written_bytes, kWeightBytes / 8);
}

}  // namespace
}  // namespace parity
