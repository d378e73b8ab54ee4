#include "engine/generate/decode_search.h"

#include <gtest/gtest.h>

#include <vector>

namespace parity {
namespace {

Tensor Logits(int64_t rows, const std::vector<float>& v) {
  return Tensor::FromVector(DType::kFloat32, {rows, static_cast<int64_t>(v.size()) / rows}, v);
}

// python/parity/torch/search.py's rules, replayed: the same choices.
TEST(DecodeSearch, BeamsSeedFromThePrefillThenContinueTheBestOfAllBeams) {
  GenerationRecord r;
  r.search.kind = "beam";
  r.search.beams = 2;
  TokenChooser chooser(r);
  auto first = chooser.Choose(0, Logits(1, {0, 3, 2.9f, -1}));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->tokens, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(first->origins, (std::vector<int64_t>{0, 0}));
  // beam 1 (score lower by 0.1) has a far better continuation: both new beams continue it
  auto next = chooser.Choose(1, Logits(2, {0, 0, 0, 0, 0, 9, 8.9f, 0}));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->tokens, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(next->origins, (std::vector<int64_t>{1, 1}));
}

TEST(DecodeSearch, SamplingKeepsTopKAndTopPAndReadsTheRecordedDraw) {
  GenerationRecord r;
  r.search.kind = "sample";
  r.search.top_p = 0.5;
  r.steps.resize(2);
  r.steps[0].draws = {0.0};
  r.steps[1].draws = {0.999};
  TokenChooser chooser(r);
  const Tensor logits = Logits(1, {0, 3, 2.9f, -1, 2});
  // the two largest reach 0.5: u = 0 takes the first of them by index, u ~ 1 the last
  EXPECT_EQ(chooser.Choose(0, logits)->tokens, (std::vector<int64_t>{1}));
  EXPECT_EQ(chooser.Choose(1, logits)->tokens, (std::vector<int64_t>{2}));
  r.search.top_k = 1;
  EXPECT_EQ(TokenChooser(r).Choose(1, logits)->tokens, (std::vector<int64_t>{1}));
  r.steps[1].draws.clear();
  EXPECT_FALSE(TokenChooser(r).Choose(1, logits).has_value());  // a step without its draw
}

TEST(DecodeSearch, GatherRowsTakesTheBeamsRows) {
  const Tensor t = Tensor::FromVector(DType::kFloat32, {2, 2}, std::vector<float>{1, 2, 3, 4});
  auto g = GatherRows(t, {1, 1, 0});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->shape(), (Shape{3, 2}));
  EXPECT_EQ(std::vector<float>(g->view<float>().begin(), g->view<float>().end()),
            (std::vector<float>{3, 4, 3, 4, 1, 2}));
  EXPECT_FALSE(GatherRows(t, {2}).has_value());
}

}  // namespace
}  // namespace parity
