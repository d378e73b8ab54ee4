#include "engine/baseline/baseline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "core/npy.h"
#include "core/npz.h"
#include "core/testing/random_tensor.h"
#include "engine/baseline/baseline_internal.h"
#include "onnx/builder.h"
#include "onnx/builtin_models.h"
#include "onnx/edit.h"
#include "onnx/graph.h"
#include "onnx/test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::ReadRaw;
using testing::TempDir;
using testing::WriteRaw;

using testing::RandomTensor;

// A model and an input file for it in a temp dir.
struct Case {
  TempDir tmp;
  fs::path model, inputs, dir;
  Case(const Model& m, const std::string& input, const Shape& shape) {
    model = tmp / "model.onnx";
    inputs = tmp / "inputs.npy";
    dir = tmp / "baseline";
    EXPECT_TRUE(m.Save(model));
    EXPECT_TRUE(WriteNpy(inputs, RandomTensor(shape, 7)));
  }
};

std::set<std::string> FilesIn(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).generic_string());
  return out;
}

std::vector<std::string> ManifestFiles(const nlohmann::json& manifest) {
  std::vector<std::string> out;
  for (const auto& s : manifest["samples"])
    for (const auto& f : s["files"]) out.push_back(f["file"]);
  return out;
}

void ExpectLayoutAndVerify(const Model& m, const Shape& shape, size_t min_layers) {
  Case c(m, "input", shape);
  auto r = WriteBaseline(c.model, c.inputs, c.dir, {});
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->samples.size(), 1u);

  // Every file on disk is in the manifest and the other way round.
  auto listed = ManifestFiles(r->manifest);
  std::set<std::string> expected(listed.begin(), listed.end());
  expected.insert("manifest.json");
  EXPECT_EQ(FilesIn(c.dir), expected);

  // input.npy first, then layers in topological order, then output.npy.
  auto g = BuildGraphView(m);
  ASSERT_TRUE(g);
  std::vector<std::string> topo;
  for (const auto& t : IntermediateTensors(*g))
    if (!t.is_graph_output) topo.push_back(t.name);
  ASSERT_GE(topo.size(), min_layers);
  const auto& files = r->samples[0].files;
  ASSERT_EQ(files.size(), topo.size() + 2);
  EXPECT_EQ(files.front().file, "input.npy");
  EXPECT_EQ(files.back().file, "output.npy");
  for (size_t i = 0; i < topo.size(); ++i) {
    const auto& f = files[i + 1];
    EXPECT_EQ(f.tensor, topo[i]);
    EXPECT_EQ(f.file, fmt::format("layer_{:04}_{}.npy", i, SanitizeFileName(topo[i])));
    EXPECT_FALSE(f.producer.empty());
    EXPECT_FALSE(f.op_type.empty());
    EXPECT_EQ(f.sha256.size(), 64u);
    EXPECT_TRUE(f.deterministic);
  }
  EXPECT_TRUE(r->deterministic());
  EXPECT_EQ(r->manifest["schema"], "parity.baseline/1");
  EXPECT_TRUE(r->manifest["model"]["sha256"].is_string());
  EXPECT_TRUE(r->manifest["env"]["ort_version"].is_string());

  auto v = VerifyBaseline(c.dir, c.model);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_TRUE(v->passed()) << (v->findings.empty() ? "" : v->findings[0].message);
  EXPECT_TRUE(v->model_checked);
  EXPECT_EQ(v->files_checked, files.size());
  EXPECT_EQ(v->comparisons.size(), files.size() - 1);  // every layer and output
}

TEST(Baseline, ConvBnReluFollowsTheLayoutAndVerifies) { ExpectLayoutAndVerify(ConvBnRelu(), {1, 3, 224, 224}, 2); }

TEST(Baseline, ResidualCnnFollowsTheLayoutAndVerifies) { ExpectLayoutAndVerify(ResidualCnn(), {1, 3, 64, 64}, 40); }

class BaselineCorruption : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = std::make_unique<Case>(ResidualCnn(), "input", Shape{1, 3, 64, 64});
    auto r = WriteBaseline(c_->model, c_->inputs, c_->dir, {});
    ASSERT_TRUE(r) << r.error().message();
    victim_ = r->samples[0].files[5].file;
  }
  void ExpectFailureNaming(const std::string& kind) {
    auto v = VerifyBaseline(c_->dir, {});
    ASSERT_TRUE(v) << v.error().message();
    EXPECT_FALSE(v->passed());
    ASSERT_EQ(v->findings.size(), 1u);
    EXPECT_EQ(v->findings[0].file, victim_);
    EXPECT_EQ(VerifyFindingKindName(v->findings[0].kind), kind);
    EXPECT_NE(v->findings[0].message.find(victim_), std::string::npos);
  }
  std::unique_ptr<Case> c_;
  std::string victim_;
};

TEST_F(BaselineCorruption, AFlippedByteFailsNamingTheFile) {
  std::string bytes = ReadRaw(c_->dir / victim_);
  bytes[bytes.size() / 2] ^= 0x01;
  WriteRaw(c_->dir / victim_, bytes);
  ExpectFailureNaming("sha256");
}

TEST_F(BaselineCorruption, ATruncatedFileFailsNamingTheFile) {
  fs::resize_file(c_->dir / victim_, fs::file_size(c_->dir / victim_) - 4);
  ExpectFailureNaming("size");
}

TEST_F(BaselineCorruption, ADeletedFileFailsNamingTheFile) {
  fs::remove(c_->dir / victim_);
  ExpectFailureNaming("missing");
}

TEST_F(BaselineCorruption, AMissingManifestIsBadInput) {
  fs::remove(c_->dir / "manifest.json");
  auto v = VerifyBaseline(c_->dir, {});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().ExitCode(), 2);
}

TEST_F(BaselineCorruption, AGarbledManifestIsBadInput) {
  WriteRaw(c_->dir / "manifest.json", "{\"schema\": \"parity.baseline/1\", \"samples\": [");
  auto v = VerifyBaseline(c_->dir, {});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().ExitCode(), 2);
}

TEST_F(BaselineCorruption, AChangedModelFailsTheRerunAndSaysTheModelChanged) {
  auto m = Model::Load(c_->model);
  ASSERT_TRUE(m);
  auto g = BuildGraphView(*m);
  ASSERT_TRUE(g);
  auto scaled = ScaleInitializer(*m, g->initializers[0], 1.5);
  ASSERT_TRUE(scaled) << scaled.error().message();
  ASSERT_TRUE(scaled->Save(c_->tmp / "changed.onnx"));
  auto v = VerifyBaseline(c_->dir, c_->tmp / "changed.onnx");
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_FALSE(v->passed());
  bool said = false;
  for (const auto& ch : v->changes) said = said || ch.field == "model_sha256";
  EXPECT_TRUE(said);
  ASSERT_FALSE(v->findings.empty());
  EXPECT_EQ(v->findings[0].kind, VerifyFindingKind::kNumeric);
}

TEST(Baseline, NamesTheFirstTensorWhereNaNAppears) {
  ModelBuilder b;
  auto x = b.Input("x", DType::kFloat32, Shape{1, 4, 8, 8});
  auto r1 = b.Relu(x);
  auto s = b.Sigmoid(r1);
  auto neg = b.Initializer("negative", Tensor::FromVector<float>(DType::kFloat32, {1}, {-1.0f}));
  auto nan = b.Log(neg);
  auto branch = b.Add(s, nan);
  b.Output(b.Add(b.Relu(branch), r1), "y");
  auto m = b.Build();
  ASSERT_TRUE(m) << m.error().message();
  Case c(*m, "x", {1, 4, 8, 8});
  auto r = WriteBaseline(c.model, c.inputs, c.dir, {});
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_TRUE(r->samples[0].first_nan.has_value());
  EXPECT_EQ(*r->samples[0].first_nan, nan);
  EXPECT_FALSE(r->samples[0].first_inf.has_value());
  EXPECT_EQ(r->manifest["samples"][0]["findings"]["first_nan"], nan);
}

TEST(Baseline, FlagsATensorFarOutsideTheInputsScale) {
  ModelBuilder b;
  auto x = b.Input("x", DType::kFloat32, Shape{1, 16});
  auto big = b.Mul(x, b.Scalar("gain", 1e6f));
  b.Output(b.Relu(big), "y");
  auto m = b.Build();
  ASSERT_TRUE(m);
  Case c(*m, "x", {1, 16});
  auto r = WriteBaseline(c.model, c.inputs, c.dir, {});
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_FALSE(r->samples[0].out_of_scale.empty());
  EXPECT_EQ(r->samples[0].out_of_scale[0], big);
}

TEST(Baseline, BatchedFilesAreByteIdenticalToOneRun) {
  Case c(ResidualCnn(), "input", {1, 3, 64, 64});
  auto whole = WriteBaseline(c.model, c.inputs, c.dir, {});
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->batches, 1u);
  const fs::path batched_dir = c.tmp / "batched";
  auto m = Model::Load(c.model);
  BaselineOptions options;
  options.batch_bytes = 256 << 10;
  auto batched = WriteBaseline(c.model, c.inputs, batched_dir, options);
  ASSERT_TRUE(batched) << batched.error().message();
  EXPECT_GT(batched->batches, 2u);
  auto files = FilesIn(c.dir);
  ASSERT_EQ(files, FilesIn(batched_dir));
  for (const auto& f : files) {
    if (f == "manifest.json") continue;
    EXPECT_EQ(ReadRaw(c.dir / f), ReadRaw(batched_dir / f)) << f;
  }
}

TEST(Baseline, SeveralSamplesGetOneDirectoryEach) {
  Case c(ConvBnRelu(), "input", {1, 3, 224, 224});
  TensorSet set;
  ASSERT_TRUE(set.Add("typical/input", RandomTensor({1, 3, 224, 224}, 1)));
  ASSERT_TRUE(set.Add("boundary/input", RandomTensor({1, 3, 224, 224}, 2)));
  ASSERT_TRUE(WriteNpz(c.tmp / "samples.npz", set));
  auto r = WriteBaseline(c.model, c.tmp / "samples.npz", c.dir, {});
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->samples.size(), 2u);
  EXPECT_TRUE(fs::exists(c.dir / "typical" / "input.npy"));
  EXPECT_TRUE(fs::exists(c.dir / "boundary" / "output.npy"));
  EXPECT_EQ(r->samples[1].files[0].file, "boundary/input.npy");
  auto v = VerifyBaseline(c.dir, c.model);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->passed());
}

TEST(Baseline, OnlyKeepsTheLayersOfTheGivenOpTypes) {
  Case c(ResidualCnn(), "input", {1, 3, 64, 64});
  BaselineOptions options;
  options.only = {"Conv"};
  auto r = WriteBaseline(c.model, c.inputs, c.dir, options);
  ASSERT_TRUE(r) << r.error().message();
  size_t layers = 0;
  for (const auto& f : r->samples[0].files) {
    if (f.role != FileRole::kLayer) continue;
    EXPECT_EQ(f.op_type, "Conv");
    EXPECT_EQ(f.file.substr(0, 11), fmt::format("layer_{:04}_", layers));
    ++layers;
  }
  EXPECT_GT(layers, 5u);
}

TEST(Baseline, RefusesANonEmptyDirectoryUnlessOverwriting) {
  Case c(ConvBnRelu(), "input", {1, 3, 224, 224});
  fs::create_directories(c.dir);
  WriteRaw(c.dir / "notes.txt", "mine");
  auto r = WriteBaseline(c.model, c.inputs, c.dir, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().ExitCode(), 2);
  BaselineOptions overwrite;
  overwrite.overwrite = true;
  EXPECT_FALSE(WriteBaseline(c.model, c.inputs, c.dir, overwrite));  // not a baseline
  fs::remove(c.dir / "notes.txt");
  ASSERT_TRUE(WriteBaseline(c.model, c.inputs, c.dir, {}));
  EXPECT_TRUE(WriteBaseline(c.model, c.inputs, c.dir, overwrite));
}

TEST(Baseline, InputsThatDoNotFitTheModelAreBadInput) {
  Case c(ConvBnRelu(), "input", {1, 3, 224, 224});
  ASSERT_TRUE(WriteNpy(c.inputs, RandomTensor({1, 4, 8, 8}, 1)));
  auto r = WriteBaseline(c.model, c.inputs, c.dir, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().ExitCode(), 2) << r.error().message();
  EXPECT_FALSE(fs::exists(c.dir / "manifest.json"));
}

TEST(SanitizeFileName, ReplacesEverythingOutsideTheSafeSet) {
  EXPECT_EQ(SanitizeFileName("/layer1/conv/Conv_output_0"), "_layer1_conv_Conv_output_0");
  EXPECT_EQ(SanitizeFileName("a.b-c_d:e f"), "a.b-c_d_e_f");
  EXPECT_EQ(SanitizeFileName(".."), "_..");
  EXPECT_EQ(SanitizeFileName(""), "_");
}

TEST(ComputeStats, CountsNaNAndInfApartFromTheFiniteStatistics) {
  auto t = Tensor::FromVector<float>(DType::kFloat32, {5}, {1.0f, 3.0f, NAN, INFINITY, -INFINITY});
  TensorStats s = ComputeStats(t);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.inf, 2);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 3.0);
  EXPECT_DOUBLE_EQ(s.mean, 2.0);
  EXPECT_DOUBLE_EQ(s.std, 1.0);
}

// float32's vectorized path against the element-by-element one (the same
// values as float64): a length that is no multiple of its lanes, NaN and
// both infinities scattered, and all-non-finite.
TEST(ComputeStats, Float32AgreesWithTheWidenedPath) {
  std::vector<float> v(1003);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37f * static_cast<float>(i)) * 50.0f - 3.0f;
  v[5] = NAN;
  v[17] = INFINITY;
  v[1002] = -INFINITY;
  v[640] = NAN;
  std::vector<double> wide(v.begin(), v.end());
  const Shape shape{static_cast<int64_t>(v.size())};
  const TensorStats f = ComputeStats(Tensor::FromVector<float>(DType::kFloat32, shape, v));
  const TensorStats d = ComputeStats(Tensor::FromVector<double>(DType::kFloat64, shape, wide));
  EXPECT_EQ(f.nan, 2);
  EXPECT_EQ(f.inf, 2);
  EXPECT_EQ(f.nan, d.nan);
  EXPECT_EQ(f.inf, d.inf);
  EXPECT_EQ(f.min, d.min);
  EXPECT_EQ(f.max, d.max);
  EXPECT_EQ(f.max_abs, d.max_abs);
  EXPECT_NEAR(f.mean, d.mean, 1e-12 * std::abs(d.mean));
  EXPECT_NEAR(f.std, d.std, 1e-12 * d.std);
  const TensorStats none = ComputeStats(Tensor::FromVector<float>(DType::kFloat32, {3}, {NAN, INFINITY, NAN}));
  EXPECT_EQ(none.nan, 2);
  EXPECT_EQ(none.inf, 1);
  EXPECT_EQ(none.max_abs, 0.0);
}

// A tensor named "block." is written as layer_0000_block..npy; the manifest's
// path check must judge path components, not the substring "..".
TEST(BaselineManifest, AFileNameWithTwoDotsIsAcceptedAndDotDotComponentsAreNot) {
  nlohmann::json f = {{"file", "layer_0000_block..npy"}, {"tensor", "block."}, {"role", "layer"},
                      {"dtype", "float32"}, {"shape", {1}}, {"sha256", ""}, {"bytes", 132}};
  auto ok = baseline_internal::FileFromJson(f);
  ASSERT_TRUE(ok) << ok.error().message();
  for (const char* bad : {"../x.npy", "a/../../x.npy", "/etc/passwd", "", "./x.npy"}) {
    f["file"] = bad;
    EXPECT_FALSE(baseline_internal::FileFromJson(f)) << bad;
  }
  f["file"] = "sample_a/layer_0001_x.npy";
  EXPECT_TRUE(baseline_internal::FileFromJson(f));
  // Floats where integers belong are refused, not converted (fuzz/crashes/baseline_manifest_*).
  for (const char* key : {"bytes", "index"}) {
    nlohmann::json g = f;
    g[key] = 1e44;
    EXPECT_FALSE(baseline_internal::FileFromJson(g)) << key;
  }
  nlohmann::json g = f;
  g["shape"] = {1.5};
  EXPECT_FALSE(baseline_internal::FileFromJson(g));
  EXPECT_FALSE(baseline_internal::FileFromJson(nlohmann::json::array()));
}

// The manifest's role names are the three FileRoleName gives; any other is a
// corrupt manifest, not a file of an unknown kind.
TEST(BaselineManifest, ReadsTheThreeRoleNamesAndRefusesOthers) {
  for (FileRole role : {FileRole::kInput, FileRole::kLayer, FileRole::kOutput}) {
    auto back = FileRoleFromName(FileRoleName(role));
    ASSERT_TRUE(back) << FileRoleName(role);
    EXPECT_EQ(*back, role);
  }
  EXPECT_EQ(FileRoleName(FileRole::kInput), "input");
  EXPECT_EQ(FileRoleName(FileRole::kLayer), "layer");
  EXPECT_EQ(FileRoleName(FileRole::kOutput), "output");
  nlohmann::json f = {{"file", "x.npy"}, {"tensor", "x"}, {"role", "layer"}, {"dtype", "float32"},
                      {"shape", {1}},    {"sha256", ""},  {"bytes", 132}};
  auto ok = baseline_internal::FileFromJson(f);
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->role, FileRole::kLayer);
  EXPECT_EQ(baseline_internal::FileToJson(*ok)["role"], "layer");
  for (const char* bad : {"Layer", "weights", ""}) {
    f["role"] = bad;
    auto r = baseline_internal::FileFromJson(f);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), ErrorCode::kCorrupt);
    EXPECT_EQ(r.error().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace parity
