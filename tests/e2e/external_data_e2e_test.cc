// A model whose weights are external data (issue 26), and the same model
// with its weights inline in one .onnx file, through the real binary: `run`,
// `check`, `baseline` and `locate` read the weights in place (ORT from the
// data file, or from where they lie in the .onnx file, never a copy parity
// parsed or inlined first), so the peak RSS of each stays under a bound that
// the copying code passed, and each reads the data through the folder it
// lies in, whatever the working directory (the modified models ORT loads as
// bytes: every-layer exposure).
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
// saved as m.onnx + m.onnx.data in `dir`, and whole (weights inline) as
// inline.onnx.
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
  ASSERT_TRUE(m->Save(dir / "inline.onnx", {.external_data = SaveOptions::ExternalData::kNever}));
  Tensor in(DType::kFloat32, {1, kDim});
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0, 1);
  for (float& v : in.mutable_view<float>()) v = dist(rng);
  ASSERT_TRUE(WriteNpy(dir / "x.npy", in));
}

// The parameter: the model's file, external data or weights inline.
class ExternalDataCli : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new e2e::TempDir("parity_ext_e2e");
    WriteMatMulStack(dir_->path());
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string P(const std::string& name) { return (dir_->path() / name).string(); }
  // The parameter's model, and an output path of this parameter's own.
  static std::string Model() { return P(GetParam()); }
  static std::string Out(const std::string& name) { return P(std::string(GetParam()) + "." + name); }

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

TEST_P(ExternalDataCli, RunReadsTheWeightsInPlace) {
  // One session, ORT reading the file: one copy of the weights at most
  // (before, the proto's inlined copy too: 309 MiB here).
  ExpectBounded({"run", Model(), "--inputs", P("x.npy"), "-o", Out("run_out.npz")}, 1.0);
  EXPECT_TRUE(fs::exists(Out("run_out.npz")));
}

TEST_P(ExternalDataCli, RunOfEveryTensorReadsTheDataFromItsFolder) {
  // The exposed model goes to ORT as bytes; its data is found in the model's
  // folder, not the working directory.
  ExpectBounded({"run", Model(), "--inputs", P("x.npy"), "-o", Out("all_out.npz"), "--all-tensors"}, 1.3);
  EXPECT_TRUE(fs::exists(Out("all_out.npz")));
}

// A passing check and a locate that finds nothing write no optimized-model
// weights: ORT's optimized model (for the fused plan) is saved with its
// initializers going to /dev/null. Before, each plan wrote the weights once.
TEST_P(ExternalDataCli, CheckPassesWithinTwoAndAHalfTimesTheWeightsWritingNoWeights) {
  const auto r = ExpectBounded({"check", Model(), "--inputs", P("x.npy"), "--runs", "2", "--warmup", "1"}, 2.5);
  EXPECT_LT(r.written_bytes, kWeightBytes / 8);
}

TEST_P(ExternalDataCli, BaselineAndLocateReadTheWeightsInPlaceWritingNoWeights) {
  ExpectBounded({"baseline", Model(), "--inputs", P("x.npy"), "-o", Out("bl")}, 1.3);
  EXPECT_TRUE(fs::exists(Out("bl") + "/manifest.json"));
  const auto r = ExpectBounded({"locate", Model(), "--inputs", P("x.npy"), "--no-ablation"}, 2.5);
  EXPECT_LT(r.written_bytes, kWeightBytes / 8);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ExternalDataCli, ::testing::Values("m.onnx", "inline.onnx"),
                         [](const auto& info) { return std::string(info.param) == "m.onnx" ? "ExternalData" : "Inline"; });

}  // namespace
}  // namespace parity
