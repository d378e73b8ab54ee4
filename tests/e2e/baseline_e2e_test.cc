// `parity baseline` and `parity baseline verify` through the real binary:
// exit codes, the memory bound (peak RSS of the child), torchvision's resnet18.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "e2e_util.h"
#include "onnx/builder.h"
#include "onnx/builtin_models.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

using e2e::TempDir;

struct Child {
  int exit_code = -1;
  int64_t peak_rss_bytes = 0;
  double seconds = 0;
  std::string out;  // stdout and stderr, one after the other
};

Child RunParity(const std::vector<std::string>& args) {
  const e2e::ProcessResult r = e2e::RunParity(args);
  return {r.exit_code, r.peak_rss_bytes, r.wall_seconds, r.out + r.err};
}

Tensor Random(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : t.mutable_view<float>()) v = dist(rng);
  return t;
}

TEST(BaselineCli, WritesVerifiesAndFailsOnACorruptFileNamingIt) {
  TempDir tmp("parity_bl_e2e");
  ASSERT_TRUE(ResidualCnn().Save(tmp / "m.onnx"));
  ASSERT_TRUE(WriteNpy(tmp / "in.npy", Random({1, 3, 64, 64}, 1)));
  auto w = RunParity({"baseline", (tmp / "m.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                      (tmp / "bl").string(), "--json", (tmp / "bl.json").string()});
  ASSERT_EQ(w.exit_code, 0) << w.out;
  EXPECT_TRUE(fs::exists(tmp / "bl" / "manifest.json"));
  EXPECT_TRUE(fs::exists(tmp / "bl.json"));
  auto v = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "m.onnx").string()});
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_NE(v.out.find("PASS"), std::string::npos);

  fs::resize_file(tmp / "bl" / "output.npy", 100);
  v = RunParity({"baseline", "verify", (tmp / "bl").string(), "--json", (tmp / "v.json").string()});
  EXPECT_EQ(v.exit_code, 1) << v.out;
  EXPECT_NE(v.out.find("output.npy"), std::string::npos) << v.out;
  std::ifstream j(tmp / "v.json");
  auto report = nlohmann::json::parse(j);
  EXPECT_EQ(report["overall_status"], "FAIL");
  EXPECT_EQ(report["findings"][0]["file"], "output.npy");
}

TEST(BaselineCli, BadInputExitsTwoWithOneLine) {
  TempDir tmp("parity_bl_e2e");
  auto v = RunParity({"baseline", "verify", (tmp / "nothing").string()});
  EXPECT_EQ(v.exit_code, 2) << v.out;
  EXPECT_EQ(std::count(v.out.begin(), v.out.end(), '\n'), 1) << v.out;
  auto w = RunParity({"baseline", (tmp / "missing.onnx").string(), "--inputs", "x.npy", "-o", (tmp / "o").string()});
  EXPECT_EQ(w.exit_code, 2) << w.out;
  auto m = RunParity({"baseline", "x.onnx", "--inputs", "x.npy", "-o", "o", "--max-memory", "lots"});
  EXPECT_EQ(m.exit_code, 2) << m.out;
}

// 60 elementwise ops on a 1x64x256x256 float32 tensor: 16 MiB each, 960 MiB of
// intermediates, observed under a 256 MiB limit (3.75 times less). The issue's
// bar: peak RSS < limit + the model's size, nothing else allowed; the files
// equal those of the unbatched run byte for byte.
TEST(BaselineMemory, BatchedPeakStaysUnderTheLimitAndFilesEqualTheUnbatchedRun) {
  if (e2e::kSanitized) GTEST_SKIP() << e2e::kRssUnderAsan;
  TempDir tmp("parity_bl_e2e");
  constexpr int kRounds = 20;  // 3 ops each
  ModelBuilder b;
  auto x = b.Input("x", DType::kFloat32, Shape{1, 64, 256, 256});
  auto half = b.Scalar("half", 0.5f), one = b.Scalar("one", 1.0f);
  for (int i = 0; i < kRounds; ++i) x = b.Add(b.Mul(b.Tanh(x), half), one);
  b.Output(b.Sigmoid(x), "y");
  auto model = b.Build();
  ASSERT_TRUE(model) << model.error().message();
  ASSERT_TRUE(model->Save(tmp / "chain.onnx"));
  ASSERT_TRUE(WriteNpy(tmp / "in.npy", Random({1, 64, 256, 256}, 3)));
  const int64_t model_bytes = static_cast<int64_t>(fs::file_size(tmp / "chain.onnx"));
  const int64_t limit = int64_t{256} << 20;
  const int64_t intermediates = int64_t{3 * kRounds} * (16 << 20);
  ASSERT_GE(intermediates, 3 * limit);

  // One pass each (the determinism re-run repeats the same runs: same peak, twice the time).
  auto batched = RunParity({"baseline", (tmp / "chain.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                            (tmp / "batched").string(), "--max-memory", "256M", "--no-determinism-check"});
  ASSERT_EQ(batched.exit_code, 0) << batched.out;
  auto whole = RunParity({"baseline", (tmp / "chain.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                          (tmp / "whole").string(), "--max-memory", "8G", "--no-determinism-check"});
  ASSERT_EQ(whole.exit_code, 0) << whole.out;

  // The rule, nothing else allowed: peak < limit + the model's size.
  const int64_t allowed = limit + model_bytes;
  std::printf("[ memory   ] intermediates %.0f MiB; unbatched peak %.1f MiB (%.2f s); batched at --max-memory 256M "
              "peak %.1f MiB (%.2f s), allowed %.1f MiB; time ratio batched/unbatched %.2f\n%s",
              intermediates / 1048576.0, whole.peak_rss_bytes / 1048576.0, whole.seconds,
              batched.peak_rss_bytes / 1048576.0, batched.seconds, allowed / 1048576.0,
              batched.seconds / whole.seconds, batched.out.c_str());
  EXPECT_LT(batched.peak_rss_bytes, allowed);
  EXPECT_GT(whole.peak_rss_bytes, limit) << "the unbatched run should need more than the limit, else the test "
                                            "proves nothing";

  // Too small a limit is refused (exit 2, naming the minimum), not exceeded.
  auto tiny = RunParity({"baseline", (tmp / "chain.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                         (tmp / "tiny").string(), "--max-memory", "64M"});
  EXPECT_EQ(tiny.exit_code, 2) << tiny.out;
  EXPECT_NE(tiny.out.find("at least --max-memory"), std::string::npos) << tiny.out;

  size_t npy = 0;
  for (const auto& e : fs::directory_iterator(tmp / "whole")) {
    const auto name = e.path().filename().string();
    if (name == "manifest.json") continue;
    ++npy;
    std::ifstream a(e.path(), std::ios::binary), c(tmp / "batched" / name, std::ios::binary);
    std::stringstream sa, sc;
    sa << a.rdbuf();
    sc << c.rdbuf();
    EXPECT_TRUE(sa.str() == sc.str()) << name;
  }
  EXPECT_EQ(npy, size_t{3 * kRounds + 2});  // input, the layers, output
}

TEST(BaselineTorch, Resnet18FromTheVenvsTorchWritesAndVerifies) {
  TempDir tmp("parity_bl_e2e");
  const std::string script =
      "import torch, torchvision\n"
      "m = torchvision.models.resnet18(weights=None).eval()\n"
      "x = torch.randn(1, 3, 64, 64)\n"
      "torch.onnx.export(m, (x,), '" + (tmp / "r18.onnx").string() + "', opset_version=17,\n"
      "                  input_names=['images'], output_names=['logits'])\n"
      "import numpy as np\n"
      "np.save('" + (tmp / "in.npy").string() + "', x.numpy())\n";
  std::ofstream(tmp / "export.py") << script;
  const std::string cmd = "cd " + std::string(PARITY_SOURCE_DIR) + " && PYTHONPATH=python timeout 300 " PARITY_PYTHON " " +
                          (tmp / "export.py").string() + " > " + (tmp / "py.log").string() + " 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(tmp / "py.log");
    std::stringstream s;
    s << log.rdbuf();
    FAIL() << s.str();
  }
  auto w = RunParity({"baseline", (tmp / "r18.onnx").string(), "--inputs", (tmp / "in.npy").string(), "-o",
                      (tmp / "bl").string()});
  ASSERT_EQ(w.exit_code, 0) << w.out;
  std::ifstream mf(tmp / "bl" / "manifest.json");
  auto manifest = nlohmann::json::parse(mf);
  size_t files = manifest["samples"][0]["files"].size();
  // A layer file per node output: resnet18's 20 Convs (BatchNorm folded in at
  // export) and 17 Relus alone pass 40.
  EXPECT_GT(files, 40u);
  size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(tmp / "bl")) on_disk += e.path().extension() == ".npy";
  EXPECT_EQ(on_disk, files);
  auto v = RunParity({"baseline", "verify", (tmp / "bl").string(), (tmp / "r18.onnx").string()});
  EXPECT_EQ(v.exit_code, 0) << v.out;
}

}  // namespace
}  // namespace parity
