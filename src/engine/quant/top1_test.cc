#include "engine/quant/top1.h"

#include "engine/quant/detections.h"

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

namespace parity {
namespace {

// [1, 4 + 2 classes, 8 anchors]: boxes in pixels, then two rows of scores.
Tensor Detections(const std::vector<float>& scores_a, const std::vector<float>& scores_b) {
  std::vector<float> v;
  for (int r = 0; r < 4; ++r)
    for (int a = 0; a < 8; ++a) v.push_back(100.0f * (r + 1) + a);
  v.insert(v.end(), scores_a.begin(), scores_a.end());
  v.insert(v.end(), scores_b.begin(), scores_b.end());
  return Tensor::FromVector(DType::kFloat32, {1, 6, 8}, v);
}

TEST(TaskOf, FitsTheAgreementToTheOutput) {
  const Tensor logits = Tensor::FromVector(DType::kFloat32, {2, 3}, std::vector<float>(6, 0.5f));
  EXPECT_EQ(TaskOf("logits", logits), OutputTask::kClassifier);
  EXPECT_EQ(TaskOf("pooler_output", logits), OutputTask::kNone);
  EXPECT_EQ(TaskOf("present.0.key", Tensor(DType::kFloat32, {1, 2, 4, 8})), OutputTask::kNone);
  EXPECT_EQ(TaskOf("past_key_values.0.value", logits), OutputTask::kNone);
  EXPECT_EQ(TaskOf("last_hidden_state", Tensor::FromVector(DType::kFloat32, {1, 4, 8}, std::vector<float>(32, 2))),
            OutputTask::kNone);
  EXPECT_EQ(TaskOf("lm_logits", Tensor::FromVector(DType::kFloat32, {1, 4, 8}, std::vector<float>(32, 2))),
            OutputTask::kClassifier);
  const Tensor det = Detections(std::vector<float>(8, 0.1f), std::vector<float>(8, 0.2f));
  EXPECT_EQ(TaskOf("output0", det), OutputTask::kDetector);
  auto layout = DetectorLayoutOf(det);
  ASSERT_TRUE(layout.has_value());
  EXPECT_EQ(layout->class_axis, 1);
  EXPECT_EQ(layout->classes, 2);
  EXPECT_EQ(layout->anchors, 8);
}

TEST(Top1, SkipsADetectorAndCountsItsAnchorsInstead) {
  TensorSet ref, test;
  ref.Set("output0", Detections({0.9f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f}, std::vector<float>(8, 0.2f)));
  // Anchor 0 keeps its detection; anchor 1 flips to class 0 at 0.3 (a spurious detection); anchor 2 keeps
  // class 1 at 0.5 (spurious too).
  test.Set("output0", Detections({0.8f, 0.3f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f},
                                 {0.2f, 0.2f, 0.5f, 0.2f, 0.2f, 0.2f, 0.2f, 0.2f}));
  std::vector<Top1Agreement> top1;
  AddTop1(ref, test, top1);
  EXPECT_TRUE(top1.empty());
  std::vector<DetectionAgreement> det;
  AddDetections(ref, test, det);
  ASSERT_EQ(det.size(), 1u);
  EXPECT_EQ(det[0].anchors, 8);
  EXPECT_EQ(det[0].class_agree, 8 - 1);  // anchor 1 flipped
  EXPECT_EQ(det[0].detections, 1);
  EXPECT_EQ(det[0].kept, 1);
  EXPECT_EQ(det[0].spurious, 2);
  EXPECT_NEAR(det[0].max_score_diff, 0.3, 1e-6);
}

}  // namespace
}  // namespace parity
