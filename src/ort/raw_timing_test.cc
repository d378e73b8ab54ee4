#include <gtest/gtest.h>

#include "ort/session.h"
#include "ort/test_models.h"

namespace parity::ort {
namespace {

TensorSet ConvReluInputs() {
  Tensor x(DType::kFloat32, {1, 2, 5, 5});
  for (float& v : x.mutable_view<float>()) v = 0.25f;
  TensorSet inputs;
  EXPECT_TRUE(inputs.Add("x", x));
  return inputs;
}

TEST(TimeRawRuns, TimesEachRun) {
  auto session = Session::Create(ModelSource::FromBytes(testing::ConvReluModel()), RunConfig{});
  ASSERT_TRUE(session.has_value()) << session.error().message();
  auto ms = session->TimeRawRuns(ConvReluInputs(), 4);
  ASSERT_TRUE(ms.has_value()) << ms.error().message();
  ASSERT_EQ(ms->size(), 4u);
  for (double v : *ms) EXPECT_GT(v, 0);
  auto none = session->TimeRawRuns(ConvReluInputs(), 0);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST(TimeRawRuns, ChecksInputsLikeRun) {
  auto session = Session::Create(ModelSource::FromBytes(testing::ConvReluModel()), RunConfig{});
  ASSERT_TRUE(session.has_value());
  auto missing = session->TimeRawRuns(TensorSet{}, 2);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(session->TimeRawRuns(ConvReluInputs(), -1).has_value());
}

}  // namespace
}  // namespace parity::ort
