// Roles and size relations of generated samples (issue 41): a decode step's
// mask is past + seq long in every sample, ids stay in the vocabulary, masks
// are 0/1, positions follow the past, and the user's --role and --dim win.
#include <gtest/gtest.h>

#include <map>

#include "engine/inputs/sample_gen.h"
#include "onnx/builder.h"

namespace parity {
namespace {

// A decode step's signature: input_ids [batch, seq] -> Gather(table [50, 8]);
// attention_mask [batch, total]; position_ids [batch, seq]; past_key_0 and
// past_value_0 [batch, 2, past, 4] (the second cache under its own symbol,
// as some exporters name them).
Model DecodeSignature() {
  ModelBuilder b;
  auto ids = b.Input("input_ids", DType::kInt64, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Symbolic("seq")});
  auto mask =
      b.Input("attention_mask", DType::kInt64, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Symbolic("total")});
  auto pos = b.Input("position_ids", DType::kInt64, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Symbolic("seq")});
  auto key = b.Input("past_key_0", DType::kFloat32,
                     std::vector<Dim>{Dim::Symbolic("batch"), Dim::Known(2), Dim::Symbolic("past"), Dim::Known(4)});
  auto value = b.Input("past_value_0", DType::kFloat32,
                       std::vector<Dim>{Dim::Symbolic("batch"), Dim::Known(2), Dim::Symbolic("past1"), Dim::Known(4)});
  auto table = b.RandomWeight("embed_tokens", {50, 8}, 1.0f);
  b.Output(b.Op("Gather", {table, ids}), "hidden");
  b.Output(b.Op("Identity", {mask}), "mask_out");
  b.Output(b.Op("Identity", {pos}), "pos_out");
  b.Output(b.Op("Identity", {key}), "key_out");
  b.Output(b.Op("Identity", {value}), "value_out");
  auto m = b.Build();
  EXPECT_TRUE(m.has_value()) << m.error().message();
  return std::move(*m);
}

std::map<std::string, Sample> Generate(const SampleGenOptions& o, SampleNotes* notes = nullptr) {
  auto samples = GenerateSamples(DecodeSignature(), o, notes);
  EXPECT_TRUE(samples.has_value()) << samples.error().message();
  std::map<std::string, Sample> by_name;
  if (samples)
    for (auto& s : *samples) by_name[s.name] = s;
  return by_name;
}

int64_t Dim(const Sample& s, const std::string& input, size_t axis) {
  return s.tensors.Find(input)->shape().at(axis);
}

TEST(SampleRoles, RolesAndRelationsOfADecodeStep) {
  SampleNotes notes;
  auto samples = Generate({}, &notes);
  std::map<std::string, std::string> roles;
  for (const auto& [name, role] : notes.roles) roles[name] = std::string(InputRoleName(role));
  EXPECT_EQ(roles, (std::map<std::string, std::string>{{"input_ids", "ids"},
                                                       {"attention_mask", "mask"},
                                                       {"position_ids", "positions"},
                                                       {"past_key_0", "cache"},
                                                       {"past_value_0", "cache"}}));
  EXPECT_EQ(notes.relations, (std::vector<std::string>{"past1 = past", "total = past + seq"}));
  for (const auto& name : {"typical", "boundary_min_size", "boundary_past0", "boundary_batch4", "anomaly_empty",
                           "boundary_edges", "anomaly_negative_ids"}) {
    ASSERT_TRUE(samples.contains(name)) << name;
    const Sample& s = samples.at(name);
    const int64_t past = Dim(s, "past_key_0", 2), seq = Dim(s, "input_ids", 1);
    EXPECT_EQ(Dim(s, "past_value_0", 2), past) << name;
    EXPECT_EQ(Dim(s, "attention_mask", 1), past + seq) << name;
    EXPECT_EQ(Dim(s, "position_ids", 1), seq) << name;
  }
  EXPECT_EQ(Dim(samples.at("boundary_past0"), "past_key_0", 2), 0);
  EXPECT_EQ(Dim(samples.at("anomaly_empty"), "input_ids", 1), 0);  // the empty sequence, not the batch
  EXPECT_EQ(Dim(samples.at("anomaly_empty"), "input_ids", 0), 1);
}

TEST(SampleRoles, ValuesFitTheirRole) {
  SampleGenOptions o;
  o.dims = {{"batch", 3}, {"seq", 4}};  // past: the default 32 (a past fixed with --dim gets no boundary_past0)
  auto samples = Generate(o);
  const Sample& typical = samples.at("typical");
  auto ids = typical.tensors.Find("input_ids")->view<int64_t>();
  for (int64_t v : ids) EXPECT_TRUE(v >= 0 && v < 50) << v;
  auto mask = typical.tensors.Find("attention_mask")->view<int64_t>();
  ASSERT_EQ(mask.size(), 108u);  // 3 x (32 + 4)
  for (int64_t v : mask) EXPECT_TRUE(v == 0 || v == 1) << v;
  EXPECT_EQ(mask[0], 1);
  EXPECT_EQ(mask[35], 1);  // row 0: no padding
  EXPECT_EQ(mask[71], 0);  // row 1 ends in one zero
  EXPECT_EQ(mask[70], 1);
  EXPECT_EQ(mask[107], 0);  // row 2 in two
  EXPECT_EQ(mask[106], 0);
  EXPECT_EQ(mask[105], 1);
  auto pos = typical.tensors.Find("position_ids")->view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(pos.begin(), pos.begin() + 4), (std::vector<int64_t>{32, 33, 34, 35}));  // after the past
  auto edges = samples.at("boundary_edges").tensors.Find("input_ids")->view<int64_t>();
  EXPECT_EQ(edges[0], 0);
  EXPECT_EQ(edges[1], 49);
  for (int64_t v : samples.at("boundary_edges").tensors.Find("attention_mask")->view<int64_t>()) EXPECT_EQ(v, 1);
  auto negative = samples.at("anomaly_negative_ids").tensors.Find("input_ids")->view<int64_t>();
  EXPECT_EQ(negative[0], -1);
  // A token id, a mask or a position at INT64_MAX means nothing: no dtype-max sample is made for them.
  EXPECT_FALSE(samples.contains("boundary_dtype_max"));
  auto past0 = samples.at("boundary_past0").tensors.Find("position_ids")->view<int64_t>();
  EXPECT_EQ(past0[0], 0);
}

TEST(SampleRoles, TheUsersDimAndRoleWin) {
  SampleGenOptions o;
  o.dims = {{"total", 7}, {"seq", 2}};
  o.roles = {{"attention_mask", InputRole::kOther}};
  SampleNotes notes;
  auto samples = Generate(o, &notes);
  EXPECT_EQ(notes.relations, (std::vector<std::string>{"past1 = past"}));
  EXPECT_EQ(Dim(samples.at("typical"), "attention_mask", 1), 7);
  EXPECT_EQ(Dim(samples.at("boundary_min_size"), "attention_mask", 1), 7);  // --dim holds in boundary_min_size
  EXPECT_EQ(Dim(samples.at("boundary_min_size"), "input_ids", 1), 2);
  EXPECT_TRUE(samples.contains("boundary_dtype_max"));  // the mask is a plain integer now
  EXPECT_FALSE(GenerateSamples(DecodeSignature(), {.roles = {{"nope", InputRole::kIds}}}).has_value());
}

TEST(SampleRoles, ATracedSampleThatContradictsARelationDropsIt) {
  SampleGenOptions o;
  o.traced_dims = {{"batch", 2}, {"seq", 2}, {"past", 6}, {"past1", 6}, {"total", 5}};
  SampleNotes notes;
  auto samples = Generate(o, &notes);
  EXPECT_EQ(notes.relations, (std::vector<std::string>{"past1 = past"}));  // 5 != 6 + 2: the mask is free
  EXPECT_EQ(Dim(samples.at("typical"), "attention_mask", 1), 32);
  o.traced_dims["total"] = 8;
  notes = {};
  Generate(o, &notes);
  EXPECT_EQ(notes.relations, (std::vector<std::string>{"past1 = past", "total = past + seq"}));
}

TEST(SampleRoles, ParsesRoles) {
  auto r = ParseRoleOverride("attention_mask=mask");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->first, "attention_mask");
  EXPECT_EQ(r->second, InputRole::kMask);
  EXPECT_EQ(ParseRoleOverride("a.b=c=image")->first, "a.b=c");
  for (const char* bad : {"x", "=ids", "x=", "x=token"}) EXPECT_FALSE(ParseRoleOverride(bad).has_value()) << bad;
}

}  // namespace
}  // namespace parity
