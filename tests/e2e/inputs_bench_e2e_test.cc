// `parity inputs` and `parity bench` through the real binary: sample names
// and shapes in the written .npz, one-line exit-2 errors for bad options, a
// bench table with both configs, a valid parity.bench/1 JSON, and --fusions
// listing the optimizers ORT applied.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/npz.h"
#include "e2e_util.h"
#include "onnx/builder.h"
#include "onnx/builtin_models.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

class InputsBench : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = e2e::MakeTempDir("parity-inputs-bench"); }
  void TearDown() override { fs::remove_all(dir_); }

  // images [batch, 3, H, W] -> Conv 3x3 pad 1 -> Relu.
  fs::path DynamicCnn() {
    ModelBuilder b;
    auto x = b.Input(
        "images", DType::kFloat32,
        std::vector<Dim>{Dim::Symbolic("batch"), Dim::Known(3), Dim::Symbolic("H"), Dim::Symbolic("W")});
    b.Output(b.Relu(b.ConvLayer(x, 3, 4, 3, 1, 1)), "y");
    auto m = b.Build();
    EXPECT_TRUE(m.has_value());
    fs::path p = dir_ / "dynamic.onnx";
    EXPECT_TRUE(m->Save(p));
    return p;
  }

  fs::path dir_;
};

TEST_F(InputsBench, InputsWritesNamedSamplesWithResolvedShapes) {
  fs::path model = DynamicCnn();
  fs::path out = dir_ / "samples.npz";
  auto r = e2e::RunParity({"inputs", model.string(), "-o", out.string(), "--seed", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto set = ReadNpz(out);
  ASSERT_TRUE(set.has_value()) << set.error().message();
  std::map<std::string, Shape> shapes;
  for (const auto& [name, t] : *set) shapes[name] = t.shape();
  EXPECT_EQ(shapes.at("typical/images"), (Shape{1, 3, 32, 32}));
  EXPECT_EQ(shapes.at("boundary_batch4/images"), (Shape{4, 3, 32, 32}));
  EXPECT_EQ(shapes.at("boundary_min_size/images"), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(shapes.at("boundary_nonsquare/images"), (Shape{1, 3, 32, 64}));
  EXPECT_EQ(shapes.at("anomaly_empty/images"), (Shape{0, 3, 32, 32}));
  for (const char* key : {"boundary_zeros/images", "boundary_large/images", "boundary_small/images",
                          "anomaly_nan/images", "anomaly_inf/images"})
    EXPECT_TRUE(shapes.contains(key)) << key;

  // The same seed writes the same bytes.
  fs::path again = dir_ / "again.npz";
  ASSERT_EQ(e2e::RunParity({"inputs", model.string(), "-o", again.string(), "--seed", "3"}).exit_code, 0);
  std::ifstream a(out, std::ios::binary), b(again, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
            std::string(std::istreambuf_iterator<char>(b), {}));

  // --shape and --dim, and only the kinds asked for.
  fs::path fixed = dir_ / "fixed.npz";
  r = e2e::RunParity({"inputs", model.string(), "-o", fixed.string(), "--kind", "typical", "--shape",
                      "images:2x3xHx40", "--dim", "H=24"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  set = ReadNpz(fixed);
  ASSERT_TRUE(set.has_value());
  ASSERT_EQ(set->size(), 1u);
  EXPECT_EQ((*set)[0].name, "typical/images");
  EXPECT_EQ((*set)[0].tensor.shape(), (Shape{2, 3, 24, 40}));
}

TEST_F(InputsBench, InputsBadOptionsExitTwoWithOneLine) {
  fs::path model = DynamicCnn();
  fs::path out = dir_ / "bad.npz";
  for (std::vector<std::string> extra : {std::vector<std::string>{"--shape", "images=1x3"},
                                         {"--shape", "images:1x3x?x4"},
                                         {"--shape", "images:1x3"},
                                         {"--shape", "nope:1x3x4x4"},
                                         {"--dim", "depth=2"},
                                         {"--range", "images:2,1"},
                                         {"--kind", "weird"}}) {
    std::vector<std::string> args = {"inputs", model.string(), "-o", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = e2e::RunParity(args);
    EXPECT_EQ(r.exit_code, 2) << extra[1] << ": " << r.err;
    EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST_F(InputsBench, BenchPrintsBothConfigsAndWritesJson) {
  fs::path model = dir_ / "cnn.onnx";
  ASSERT_TRUE(ResidualCnn().Save(model));
  fs::path json = dir_ / "bench.json";
  auto r = e2e::RunParity({"bench", model.string(), "--runs", "5", "--warmup", "1", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool saw_disable = false, saw_all = false;
  for (const auto& line : e2e::Lines(r.out)) {
    saw_disable |= line.starts_with("disable ");
    saw_all |= line.starts_with("all ");
  }
  EXPECT_TRUE(saw_disable && saw_all) << r.out;
  std::ifstream in(json);
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema"], "parity.bench/1");
  EXPECT_EQ(j["reference"], "disable");
  ASSERT_EQ(j["configs"].size(), 2u);
  for (const auto& c : j["configs"]) {
    EXPECT_EQ(c["latency"]["runs"], 5);
    EXPECT_GT(c["latency"]["p50_ms"].get<double>(), 0);
    EXPECT_GT(c["peak_rss_bytes"].get<int64_t>(), 0);
    EXPECT_TRUE(c["error"].is_null());
  }
  EXPECT_EQ(j["configs"][0]["max_abs_vs_reference"], 0.0);
  EXPECT_TRUE(j["configs"][1]["max_abs_vs_reference"].is_number());
}

TEST_F(InputsBench, BenchFusionsListsTheOptimizersOrtApplied) {
  fs::path model = dir_ / "transformer.onnx";
  ASSERT_TRUE(TransformerBlock().Save(model));
  fs::path json = dir_ / "fusions.json";
  auto r = e2e::RunParity({"bench", model.string(), "--configs", "disable", "--runs", "3", "--warmup", "0",
                           "--fusions", "--json", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fusions switched off"), std::string::npos) << r.out;
  std::ifstream in(json);
  auto j = nlohmann::json::parse(in, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j["fusions"].is_object());
  EXPECT_EQ(j["fusions"]["from"], "all");
  ASSERT_GE(j["fusions"]["optimizers"].size(), 1u) << r.out;
  for (const auto& f : j["fusions"]["optimizers"]) {
    EXPECT_FALSE(f["optimizer"].get<std::string>().empty());
    EXPECT_TRUE(f["speed_ms"].is_number());
    EXPECT_TRUE(f["precision_cost"].is_number());
  }
}

TEST_F(InputsBench, BenchBadConfigLevelExitsTwo) {
  fs::path model = dir_ / "cnn.onnx";
  ASSERT_TRUE(ConvBnRelu().Save(model));
  auto r = e2e::RunParity({"bench", model.string(), "--configs", "disable,fastest"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(e2e::Lines(r.err).size(), 1u) << r.err;
}

}  // namespace
}  // namespace parity
