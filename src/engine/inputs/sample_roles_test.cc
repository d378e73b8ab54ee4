// Roles and size relations of generated samples (issue 41): a decode step's
// mask is past + seq long in every sample, ids stay in the vocabulary, masks
// are 0/1, positions follow the past, and the user's --role and --dim win.
#include <gtest/gtest.h>

#include <cmath>
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

// GPT-2's learned positions: input_ids -> Gather(wte), position_ids ->
// Gather(wpe [128, 8]), a cache past_key_0 [batch, 2, past, 4].
Model LearnedPositionsSignature() {
  ModelBuilder b;
  auto ids = b.Input("input_ids", DType::kInt64, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Symbolic("seq")});
  auto pos = b.Input("position_ids", DType::kInt64, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Symbolic("seq")});
  auto key = b.Input("past_key_0", DType::kFloat32,
                     std::vector<Dim>{Dim::Symbolic("batch"), Dim::Known(2), Dim::Symbolic("past"), Dim::Known(4)});
  auto wte = b.Op("Gather", {b.RandomWeight("wte", {50, 8}, 1.0f), ids});
  auto wpe = b.Op("Gather", {b.RandomWeight("wpe", {128, 8}, 1.0f), pos});
  b.Output(b.Op("Add", {wte, wpe}), "hidden");
  b.Output(b.Op("Identity", {key}), "key_out");
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
  EXPECT_EQ(mask[36], 0);  // row 1 starts with one zero (left padding of the past)
  EXPECT_EQ(mask[37], 1);
  EXPECT_EQ(mask[72 + 29], 1);  // row 2: two zeros at the end of its past (32 cached)
  EXPECT_EQ(mask[72 + 30], 0);
  EXPECT_EQ(mask[72 + 31], 0);
  EXPECT_EQ(mask[107], 1);
  auto pos = typical.tensors.Find("position_ids")->view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(pos.begin(), pos.begin() + 4), (std::vector<int64_t>{32, 33, 34, 35}));  // after the past
  // Rows with padding continue the tokens they keep: 31 kept before row 1's new tokens, 30 before row 2's.
  EXPECT_EQ(std::vector<int64_t>(pos.begin() + 4, pos.end()), (std::vector<int64_t>{31, 32, 33, 34, 30, 31, 32, 33}));
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

// Issue 51: a batch as served. Row 1 is left-padded, row 2 right-padded in
// its past, row 3 right-padded at the end; each row's positions continue the
// tokens its mask keeps (transformers' cumsum - 1; 1 at a padded token).
TEST(SampleRoles, PaddedBatchesWithPositionsPerRow) {
  SampleGenOptions o;
  o.dims = {{"batch", 4}, {"seq", 2}, {"past", 4}};
  const auto samples = Generate(o);
  const Sample& s = samples.at("typical");
  auto mask = s.tensors.Find("attention_mask")->view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(mask.begin(), mask.end()),
            (std::vector<int64_t>{1, 1, 1, 1, 1, 1,    // row 0: no padding
                                  0, 1, 1, 1, 1, 1,    // row 1: left padding
                                  1, 1, 0, 0, 1, 1,    // row 2: the past right-padded, then decoded on
                                  1, 1, 1, 0, 0, 0}));  // row 3: right padding, new tokens included
  auto pos = s.tensors.Find("position_ids")->view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(pos.begin(), pos.end()), (std::vector<int64_t>{4, 5, 3, 4, 2, 3, 1, 1}));
  // Without a cache (a prompt): left and right padding of the tokens; positions restart per row.
  o.dims["past"] = 0;
  const auto prompts = Generate(o);
  const Sample& prompt = prompts.at("typical");
  auto m0 = prompt.tensors.Find("attention_mask")->view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(m0.begin(), m0.end()), (std::vector<int64_t>{1, 1, 0, 1, 1, 0, 1, 0}));
  auto p0 = prompt.tensors.Find("position_ids")->view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(p0.begin(), p0.end()), (std::vector<int64_t>{0, 1, 1, 0, 0, 1, 0, 1}));
}

// Issue 51: --dim on a derived size keeps the relation (total=9 with seq=2:
// past 7, in every sample) or is refused in one line; never dropped.
TEST(SampleRoles, TheUsersDimKeepsTheRelations) {
  SampleGenOptions o;
  o.dims = {{"total", 9}, {"seq", 2}};
  SampleNotes notes;
  auto samples = Generate(o, &notes);
  EXPECT_EQ(notes.relations, (std::vector<std::string>{"past1 = past", "total = past + seq"}));
  for (const auto& [name, s] : samples) {
    if (name == "anomaly_empty") continue;  // the empty sequence: 7 + 0
    EXPECT_EQ(Dim(s, "attention_mask", 1), 9) << name;
    EXPECT_EQ(Dim(s, "past_key_0", 2), 7) << name;
    EXPECT_EQ(Dim(s, "past_value_0", 2), 7) << name;
  }
  EXPECT_FALSE(samples.contains("boundary_past0"));  // the past follows the user's sizes
  o.dims = {{"past1", 5}};  // a cache's own symbol sets the one past
  const auto one_past = Generate(o);
  EXPECT_EQ(Dim(one_past.at("typical"), "past_key_0", 2), 5);
  for (const auto& bad : std::vector<std::map<std::string, int64_t>>{
           {{"total", 9}}, {{"total", 9}, {"past", 4}, {"seq", 2}}, {{"total", 1}, {"seq", 2}},
           {{"past", 3}, {"past1", 4}}}) {
    auto r = GenerateSamples(DecodeSignature(), {.dims = bad});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(r.error().message().find('\n'), std::string::npos) << r.error().message();
  }
}

// Issue 51: --range on every kind of input: ids (their vocabulary was used
// whatever the range said), a plain float, a count.
TEST(SampleRoles, TheUsersRangeIsHonouredOnIds) {
  SampleGenOptions o;
  o.ranges = {{"input_ids", {5, 7}}};
  auto samples = Generate(o);
  for (const auto& name : {"typical", "boundary_edges", "boundary_batch4"})
    for (int64_t v : samples.at(name).tensors.Find("input_ids")->view<int64_t>()) EXPECT_TRUE(v == 5 || v == 6) << v;
}

// Issue 51: --role holds on an input of any dtype: a float given the role of
// ids holds whole numbers, one given the role of a mask 0/1 rows; --range on
// a mask gives the range's values, not the role's.
TEST(SampleRoles, TheUsersRoleAndRangeHoldOnEveryKind) {
  SampleGenOptions o;
  o.dims = {{"batch", 2}, {"seq", 2}, {"past", 3}};
  o.roles = {{"past_key_0", InputRole::kIds}, {"past_value_0", InputRole::kMask}};
  const auto samples = Generate(o);
  for (float v : samples.at("typical").tensors.Find("past_key_0")->view<float>())
    EXPECT_TRUE(v == std::floor(v) && v >= 0 && v < 10) << v;
  for (float v : samples.at("typical").tensors.Find("past_value_0")->view<float>()) EXPECT_TRUE(v == 0 || v == 1) << v;
  o.roles.clear();
  o.ranges = {{"attention_mask", {2, 4}}};
  const auto ranged = Generate(o);
  for (int64_t v : ranged.at("typical").tensors.Find("attention_mask")->view<int64_t>())
    EXPECT_TRUE(v == 2 || v == 3) << v;
}

// Issue 51: GPT-2's position_ids are read by an embedding (wpe), as ids
// are; they are positions all the same, after the past.
TEST(SampleRoles, APositionReadByAnEmbeddingIsAPosition) {
  SampleNotes notes;
  auto samples = GenerateSamples(LearnedPositionsSignature(), {.dims = {{"seq", 3}, {"past", 5}}}, &notes);
  ASSERT_TRUE(samples.has_value()) << samples.error().message();
  EXPECT_EQ(notes.roles[1], (std::pair<std::string, InputRole>{"position_ids", InputRole::kPositions}));
  auto p = samples->front().tensors.Find("position_ids")->view<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(p.begin(), p.end()), (std::vector<int64_t>{5, 6, 7}));
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
