#include "engine/quant/top1.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

TensorSet Logits(const std::vector<float>& v, Shape shape) {
  TensorSet s;
  s.Set("logits", Tensor::FromVector(DType::kFloat32, std::move(shape), v));
  return s;
}

TEST(Top1, CountsRowsWhoseTopClassFlips) {
  std::vector<Top1Agreement> tally;
  // Two rows of three classes: the first keeps class 2, the second flips from 0 to 1.
  AddTop1(Logits({0, 1, 5, 3, 1, 2}, {2, 3}), Logits({0, 1, 4, 1, 3, 2}, {2, 3}), tally);
  AddTop1(Logits({9, 1}, {1, 2}), Logits({9, 2}, {1, 2}), tally);  // another sample: agrees
  ASSERT_EQ(tally.size(), 1u);
  EXPECT_EQ(tally[0].rows, 3);
  EXPECT_EQ(tally[0].agree, 2);
  EXPECT_EQ(tally[0].samples, 2);
  EXPECT_NEAR(tally[0].flipped(), 1.0 / 3, 1e-12);
}

TEST(Top1, IgnoresOutputsWithoutAClassAxis) {
  std::vector<Top1Agreement> tally;
  AddTop1(Logits({1}, {1, 1}), Logits({2}, {1, 1}), tally);
  TensorSet ints, ints2;
  ints.Set("ids", Tensor::FromVector(DType::kInt64, {2}, std::vector<int64_t>{1, 2}));
  ints2.Set("ids", Tensor::FromVector(DType::kInt64, {2}, std::vector<int64_t>{2, 1}));
  AddTop1(ints, ints2, tally);
  EXPECT_TRUE(tally.empty());
}

}  // namespace
}  // namespace parity
