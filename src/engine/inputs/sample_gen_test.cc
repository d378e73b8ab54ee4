#include "engine/inputs/sample_gen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "onnx/builder.h"

namespace parity {
namespace {

// images [batch, 3, H, W] -> Relu.
Model DynamicCnn() {
  ModelBuilder b;
  auto x = b.Input(
      "images", DType::kFloat32,
      std::vector<Dim>{Dim::Symbolic("batch"), Dim::Known(3), Dim::Symbolic("H"), Dim::Symbolic("W")});
  b.Output(b.Relu(x), "y");
  auto m = b.Build();
  EXPECT_TRUE(m.has_value()) << m.error().message();
  return std::move(*m);
}

// ids int64 [batch, seq] -> Gather(embedding [100, 8]).
Model Embedding() {
  ModelBuilder b;
  auto ids = b.Input("ids", DType::kInt64, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Symbolic("seq")});
  auto table = b.RandomWeight("embedding", {100, 8}, 1.0f);
  b.Output(b.Op("Gather", {table, ids}), "emb");
  auto m = b.Build();
  EXPECT_TRUE(m.has_value()) << m.error().message();
  return std::move(*m);
}

DimSpec Fixed(int64_t v) { return DimSpec{v, ""}; }

SampleGenOptions Seeded(uint64_t seed,
                        std::vector<SampleKind> kinds = {SampleKind::kTypical, SampleKind::kBoundary,
                                                            SampleKind::kAnomaly}) {
  SampleGenOptions o;
  o.seed = seed;
  o.kinds = std::move(kinds);
  return o;
}

std::map<std::string, Sample> ByName(const std::vector<Sample>& samples) {
  std::map<std::string, Sample> m;
  for (const auto& s : samples) m[s.name] = s;
  return m;
}

TEST(GenerateSamples, NamesEveryKindThatApplies) {
  auto samples = GenerateSamples(DynamicCnn(), {});
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  std::vector<std::string> names;
  for (const auto& s : *samples) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"typical", "boundary_zeros", "boundary_large", "boundary_small",
                                             "boundary_batch4", "boundary_min_size", "boundary_nonsquare",
                                             "anomaly_nan", "anomaly_inf", "anomaly_empty"}));
  for (const auto& s : *samples)
    EXPECT_EQ(SampleKindName(SampleKindOf(s.name)),
              s.name == "typical" ? "typical" : s.name.substr(0, s.name.find('_')));
  EXPECT_EQ(SampleKindOf("mine"), SampleKind::kUser);
}

// The names GenerateSamples gives (above) and what a user might name a sample.
TEST(SampleKindOf, ReadsTheKindFromGeneratedNamesOnly) {
  EXPECT_EQ(SampleKindOf("typical"), SampleKind::kTypical);
  EXPECT_EQ(SampleKindOf("boundary_0"), SampleKind::kBoundary);
  EXPECT_EQ(SampleKindOf("boundary_batch4"), SampleKind::kBoundary);
  EXPECT_EQ(SampleKindOf("anomaly_nan"), SampleKind::kAnomaly);
  EXPECT_EQ(SampleKindOf("anomaly_out_of_range_ids"), SampleKind::kAnomaly);
  // Not generated names: a user's samples.
  EXPECT_EQ(SampleKindOf("typical2"), SampleKind::kUser);
  EXPECT_EQ(SampleKindOf("typical_1"), SampleKind::kUser);
  EXPECT_EQ(SampleKindOf("boundary"), SampleKind::kUser);
  EXPECT_EQ(SampleKindOf("anomalyish"), SampleKind::kUser);
  EXPECT_EQ(SampleKindOf("default"), SampleKind::kUser);
  EXPECT_EQ(SampleKindOf(""), SampleKind::kUser);
}

TEST(SampleKindName, NamesEveryKind) {
  EXPECT_EQ(SampleKindName(SampleKind::kTypical), "typical");
  EXPECT_EQ(SampleKindName(SampleKind::kBoundary), "boundary");
  EXPECT_EQ(SampleKindName(SampleKind::kAnomaly), "anomaly");
  EXPECT_EQ(SampleKindName(SampleKind::kUser), "user");
}

TEST(GenerateSamples, ResolvesDynamicDimsPerSample) {
  auto samples = GenerateSamples(DynamicCnn(), {});
  ASSERT_TRUE(samples.has_value());
  auto by = ByName(*samples);
  auto shape = [&](const std::string& s) { return by.at(s).tensors.Find("images")->shape(); };
  EXPECT_EQ(shape("typical"), (Shape{1, 3, 32, 32}));
  EXPECT_EQ(shape("boundary_batch4"), (Shape{4, 3, 32, 32}));
  EXPECT_EQ(shape("boundary_min_size"), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(shape("boundary_nonsquare"), (Shape{1, 3, 32, 64}));
  EXPECT_EQ(shape("anomaly_empty"), (Shape{0, 3, 32, 32}));
}

TEST(GenerateSamples, ShapeAndDimOverrides) {
  SampleGenOptions o;
  o.kinds = {SampleKind::kTypical, SampleKind::kBoundary};
  o.dims["W"] = 48;
  o.dims["batch"] = 2;
  auto samples = GenerateSamples(DynamicCnn(), o);
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  auto by = ByName(*samples);
  EXPECT_EQ(by.at("typical").tensors.Find("images")->shape(), (Shape{2, 3, 32, 48}));
  EXPECT_TRUE(by.contains("boundary_batch4"));

  // A fully fixed --shape leaves no dynamic dim to vary.
  SampleGenOptions fixed;
  auto spec = ParseShapeOverride("images:1x3x224x224");
  ASSERT_TRUE(spec.has_value());
  fixed.shapes[spec->first] = spec->second;
  samples = GenerateSamples(DynamicCnn(), fixed);
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  by = ByName(*samples);
  EXPECT_EQ(by.at("typical").tensors.Find("images")->shape(), (Shape{1, 3, 224, 224}));
  EXPECT_FALSE(by.contains("boundary_batch4"));
  EXPECT_FALSE(by.contains("anomaly_empty"));
}

TEST(GenerateSamples, BadOverridesAreInvalidArguments) {
  SampleGenOptions o;
  o.shapes["images"] = {Fixed(1), Fixed(3)};
  auto r = GenerateSamples(DynamicCnn(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("rank 2"), std::string::npos) << r.error().message();

  o.shapes["images"] = {Fixed(1), Fixed(4), Fixed(8), Fixed(8)};
  r = GenerateSamples(DynamicCnn(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("axis 1 is 3"), std::string::npos) << r.error().message();

  SampleGenOptions unknown;
  unknown.shapes["nope"] = {};
  EXPECT_FALSE(GenerateSamples(DynamicCnn(), unknown).has_value());
  SampleGenOptions dim;
  dim.dims["depth"] = 3;
  EXPECT_FALSE(GenerateSamples(DynamicCnn(), dim).has_value());
}

TEST(GenerateSamples, DeterministicForASeedAndIndependentOfKinds) {
  SampleGenOptions o = Seeded(7);
  auto a = GenerateSamples(DynamicCnn(), o);
  auto b = GenerateSamples(DynamicCnn(), o);
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i)
    EXPECT_TRUE((*a)[i].tensors[0].tensor.BitwiseEquals((*b)[i].tensors[0].tensor)) << (*a)[i].name;

  SampleGenOptions typical_only = Seeded(7, {SampleKind::kTypical});
  auto c = GenerateSamples(DynamicCnn(), typical_only);
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->size(), 1u);
  EXPECT_TRUE((*c)[0].tensors[0].tensor.BitwiseEquals((*a)[0].tensors[0].tensor));

  SampleGenOptions other = Seeded(8, {SampleKind::kTypical});
  auto d = GenerateSamples(DynamicCnn(), other);
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE((*d)[0].tensors[0].tensor.BitwiseEquals((*a)[0].tensors[0].tensor));
}

TEST(GenerateSamples, FloatValuesByKind) {
  SampleGenOptions o;
  o.ranges["images"] = {-1, 1};
  auto samples = GenerateSamples(DynamicCnn(), o);
  ASSERT_TRUE(samples.has_value());
  auto by = ByName(*samples);
  auto values = [&](const std::string& s) { return by.at(s).tensors.Find("images")->view<float>(); };
  for (float v : values("typical")) EXPECT_TRUE(v >= -1 && v < 1);
  for (float v : values("boundary_zeros")) EXPECT_EQ(v, 0);
  float large = 0;
  for (float v : values("boundary_large")) large = std::max(large, std::abs(v));
  EXPECT_GT(large, 10);
  int nans = 0, pos_inf = 0, neg_inf = 0;
  for (float v : values("anomaly_nan")) nans += std::isnan(v);
  for (float v : values("anomaly_inf")) pos_inf += v == INFINITY, neg_inf += v == -INFINITY;
  EXPECT_GE(nans, 1);
  EXPECT_GE(pos_inf, 1);
  EXPECT_GE(neg_inf, 1);
}

TEST(GenerateSamples, GatherIdsStayInsideTheVocabulary) {
  auto samples = GenerateSamples(Embedding(), {});
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  auto by = ByName(*samples);
  ASSERT_TRUE(by.contains("anomaly_out_of_range_ids"));
  EXPECT_FALSE(by.contains("boundary_dtype_max"));  // ids are judged by the vocabulary instead
  EXPECT_FALSE(by.contains("anomaly_nan"));         // no float input
  const Tensor& typical = *by.at("typical").tensors.Find("ids");
  EXPECT_EQ(typical.shape(), (Shape{1, 32}));
  for (int64_t id : typical.view<int64_t>()) EXPECT_TRUE(id >= 0 && id < 100) << id;
  int out_of_range = 0;
  for (int64_t id : by.at("anomaly_out_of_range_ids").tensors.Find("ids")->view<int64_t>())
    out_of_range += id >= 100;
  EXPECT_GE(out_of_range, 1);
}

TEST(GenerateSamples, PlainIntegersGetTheDtypeMax) {
  ModelBuilder b;
  auto x = b.Input("count", DType::kInt32, Shape{2});
  b.Output(b.Identity(x), "y");
  auto m = b.Build();
  ASSERT_TRUE(m.has_value());
  auto samples = GenerateSamples(*m, {});
  ASSERT_TRUE(samples.has_value());
  auto by = ByName(*samples);
  ASSERT_TRUE(by.contains("boundary_dtype_max"));
  for (int32_t v : by.at("boundary_dtype_max").tensors.Find("count")->view<int32_t>())
    EXPECT_EQ(v, INT32_MAX);
  for (int32_t v : by.at("typical").tensors.Find("count")->view<int32_t>()) EXPECT_TRUE(v >= 0 && v < 10);
}

// A count reaches a Range's limit through Squeeze and Cast, and a shape
// input reaches ConstantOfShape: neither is ever set to its dtype's max.
TEST(GenerateSamples, CountsGetSmallValuesNeverTheDtypeMax) {
  ModelBuilder b;
  auto limit = b.Input("limit", DType::kInt32, Shape{1});
  auto shape = b.Input("shape", DType::kInt64, Shape{4});
  auto plain = b.Input("plain", DType::kInt64, Shape{2});
  auto squeezed = b.Op("Squeeze", {limit});
  auto as64 = b.Op("Cast", {squeezed}, {{"to", int64_t{7}}});
  auto start = b.Constant(Tensor::FromVector(DType::kInt64, {}, std::vector<int64_t>{0}));
  auto delta = b.Constant(Tensor::FromVector(DType::kInt64, {}, std::vector<int64_t>{1}));
  b.Output(b.Op("Range", {start, as64, delta}), "r");
  b.Output(b.Op("ConstantOfShape", {shape}), "z");
  b.Output(b.Identity(plain), "p");
  auto m = b.Build();
  ASSERT_TRUE(m.has_value()) << m.error().message();
  auto samples = GenerateSamples(*m, {});
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  auto by = ByName(*samples);
  ASSERT_TRUE(by.contains("boundary_dtype_max"));  // for `plain`
  ASSERT_TRUE(by.contains("boundary_count_max"));
  for (const auto& [name, sample] : by) {
    for (int32_t v : sample.tensors.Find("limit")->view<int32_t>()) EXPECT_TRUE(v >= 0 && v <= 64) << name << v;
    for (int64_t v : sample.tensors.Find("shape")->view<int64_t>()) EXPECT_TRUE(v >= 0 && v <= 64) << name << v;
  }
  for (int64_t v : by.at("boundary_dtype_max").tensors.Find("plain")->view<int64_t>()) EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(by.at("boundary_count_max").tensors.Find("limit")->view<int32_t>()[0], 64);
  // Four elements of a shape: 32 each, 2^20 elements in all.
  for (int64_t v : by.at("boundary_count_max").tensors.Find("shape")->view<int64_t>()) EXPECT_EQ(v, 32);
  for (int64_t v : by.at("boundary_zeros").tensors.Find("shape")->view<int64_t>()) EXPECT_EQ(v, 0);
  for (int32_t v : by.at("typical").tensors.Find("limit")->view<int32_t>()) EXPECT_TRUE(v >= 1 && v <= 8) << v;
}

TEST(SampleOptionParsers, AcceptTheDocumentedForms) {
  auto shape = ParseShapeOverride("images:1x3xHxW");
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->first, "images");
  ASSERT_EQ(shape->second.size(), 4u);
  EXPECT_EQ(shape->second[1].value, 3);
  EXPECT_EQ(shape->second[2].symbol, "H");
  auto dim = ParseDimOverride("batch=4");
  ASSERT_TRUE(dim.has_value());
  EXPECT_EQ(dim->second, 4);
  auto range = ParseRangeOverride("images:-1.5,2");
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->second.lo, -1.5);
  auto kinds = ParseSampleKinds("anomaly,typical");
  ASSERT_TRUE(kinds.has_value());
  EXPECT_EQ(kinds->size(), 2u);

  for (const char* bad : {"images", "images:", "images:1x-3", "images:1xx3", ":1x3"})
    EXPECT_FALSE(ParseShapeOverride(bad).has_value()) << bad;
  EXPECT_FALSE(ParseDimOverride("batch").has_value());
  EXPECT_FALSE(ParseDimOverride("4=batch").has_value());
  EXPECT_FALSE(ParseRangeOverride("images:1,1").has_value());
  EXPECT_FALSE(ParseRangeOverride("images:a,b").has_value());
  EXPECT_FALSE(ParseSampleKinds("typical,weird").has_value());
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// Issue 56, class 5: a rank-7 input of defaulted dims is made smaller, every
// sample within the element bound (the batch sample too), the notes say
// which dims; a --dim the user gives is kept; an ordinary model is as before.
TEST(GenerateSamples, DefaultedDimsAreBoundedByElementsAndBytes) {
  ModelBuilder b;
  std::vector<Dim> dims;
  for (int i = 0; i < 7; ++i) dims.push_back(Dim::Symbolic("d" + std::to_string(i)));
  b.Output(b.Relu(b.Input("x", DType::kFloat32, dims)), "y");
  auto m = b.Build();
  ASSERT_TRUE(m.has_value());
  SampleGenOptions o;
  SampleNotes notes;
  auto samples = GenerateSamples(*m, o, &notes);
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  for (const Sample& s : *samples)
    EXPECT_LE(s.tensors.Find("x")->size(), o.max_input_elements) << s.name;
  EXPECT_NE(notes.bounded.find("(default 32)"), std::string::npos) << notes.bounded;
  EXPECT_GT(samples->front().tensors.Find("x")->size(), o.max_input_elements / 16) << "not smaller than needed";

  o.dims["d1"] = 20;
  o.max_input_elements = 1000;
  samples = GenerateSamples(*m, o);
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  EXPECT_EQ(samples->front().tensors.Find("x")->shape()[1], 20) << "a --dim is the user's";

  o = {};
  o.max_sample_bytes = 1000;  // bytes bound the sample too
  samples = GenerateSamples(*m, o);
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  for (const Sample& s : *samples) EXPECT_LE(s.tensors.Find("x")->size() * 4, 1000) << s.name;

  SampleNotes cnn_notes;
  auto cnn = GenerateSamples(DynamicCnn(), {}, &cnn_notes);
  ASSERT_TRUE(cnn.has_value());
  EXPECT_EQ(cnn->front().tensors.Find("images")->shape(), (Shape{1, 3, 32, 32}));
  EXPECT_TRUE(cnn_notes.bounded.empty()) << cnn_notes.bounded;
}

}  // namespace
}  // namespace parity
