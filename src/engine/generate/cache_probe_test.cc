// The shared cache form's probes (cache_probe.h) and its detection
// (step_session.h's LooksShared): positions a step wrote, the unwritten tail
// filled, a shared graph told from a growing one.
#include "engine/generate/cache_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/dtype.h"
#include "engine/runner/step_session.h"

namespace parity {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// [rows 2, heads 2, length 4, dim 3] holding 0, 1, 2, ...
Tensor Cache(DType dtype = DType::kFloat32) {
  Tensor t(dtype, {2, 2, 4, 3});
  for (int64_t i = 0; i < t.size(); ++i) {
    if (dtype == DType::kFloat32) t.mutable_view<float>()[i] = static_cast<float>(i);
    else t.mutable_view<uint16_t>()[i] = FloatToHalf(static_cast<float>(i));
  }
  return t;
}

TEST(CacheProbe, ChangedPositionsAreFoundPerRowInAnyHead) {
  const Tensor before = Cache();
  Tensor after = before.Copy();
  after.mutable_view<float>()[(0 * 2 + 1) * 12 + 2 * 3 + 1] = -1;  // row 0, head 1, position 2
  after.mutable_view<float>()[(1 * 2 + 0) * 12 + 3 * 3 + 0] = -1;  // row 1, head 0, position 3
  after.mutable_view<float>()[(1 * 2 + 1) * 12 + 0 * 3 + 2] = -1;  // row 1, head 1, position 0
  const auto changed = ChangedPositions(before, after);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_THAT(changed[0], ElementsAre(2));
  EXPECT_THAT(changed[1], ElementsAre(0, 3));
  EXPECT_THAT(ChangedPositions(before, before.Copy())[0], IsEmpty());
}

TEST(CacheProbe, FillFromSetsEveryPositionFromTheRowsStartAndNothingBefore) {
  const Tensor cache = Cache();
  auto filled = FillFrom(cache, {3, 1}, kUnwrittenSentinel);
  ASSERT_TRUE(filled.has_value()) << filled.error().message();
  const auto changed = ChangedPositions(cache, *filled);
  EXPECT_THAT(changed[0], ElementsAre(3));
  EXPECT_THAT(changed[1], ElementsAre(1, 2, 3));
  EXPECT_EQ(filled->view<float>()[3 * 3], kUnwrittenSentinel);
  EXPECT_EQ(cache.view<float>()[3 * 3], 9.0f);  // the original untouched
}

TEST(CacheProbe, FillFromWritesHalfPrecisionAndRefusesIntegers) {
  auto half = FillFrom(Cache(DType::kFloat16), {0, 4}, kUnwrittenSentinel);
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(HalfToFloat(half->view<uint16_t>()[0]), 100.0f);
  EXPECT_EQ(HalfToFloat(half->view<uint16_t>()[2 * 12]), 24.0f);  // row 1 kept: it starts past the end
  auto ints = FillFrom(Tensor(DType::kInt64, {1, 1, 2, 2}), {0}, 1);
  ASSERT_FALSE(ints.has_value());
  EXPECT_EQ(ints.error().code(), ErrorCode::kUnsupported);
}

TEST(CacheProbe, MaxAbsDiffCountsANanOnOneSideAsInfinite) {
  Tensor a = Tensor::FromVector(DType::kFloat32, {3}, std::vector<float>{1, 2, 3});
  Tensor b = Tensor::FromVector(DType::kFloat32, {3}, std::vector<float>{1, 2.5f, 3});
  EXPECT_DOUBLE_EQ(MaxAbsDiff(a, b), 0.5);
  b.mutable_view<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isinf(MaxAbsDiff(a, b)));
}

TEST(CacheProbe, PositionListsRunsAndSingles) {
  EXPECT_EQ(PositionList({7}), "7");
  EXPECT_EQ(PositionList({7, 9}), "7, 9");
  EXPECT_EQ(PositionList({0, 1, 2, 3, 4}), "0..4");
}

ort::TensorInfo Info(std::string name, Shape shape, std::vector<std::string> dims = {}) {
  ort::TensorInfo i{.name = std::move(name), .dtype = DType::kFloat32, .shape = std::move(shape)};
  i.dim_names = dims.empty() ? std::vector<std::string>(i.shape.size()) : std::move(dims);
  return i;
}

TEST(StepSessionForm, ASharedGraphIsToldFromAGrowingOne) {
  const CachePairs kv{{"past_key_0", "present_key_0"}};
  // past and present one static buffer: shared
  EXPECT_TRUE(LooksShared({Info("past_key_0", {1, 2, 16, 8})}, {Info("present_key_0", {1, 2, 16, 8})}, kv));
  // a symbolic batch named alike on both sides: still shared
  EXPECT_TRUE(LooksShared({Info("past_key_0", {-1, 2, 16, 8}, {"batch", "", "", ""})},
                          {Info("present_key_0", {-1, 2, 16, 8}, {"batch", "", "", ""})}, kv));
  // healthy twins that grow: open lengths (past, past + 1), or one longer
  EXPECT_FALSE(LooksShared({Info("past_key_0", {1, 2, -1, 8}, {"", "", "past", ""})},
                           {Info("present_key_0", {1, 2, -1, 8}, {"", "", "total", ""})}, kv));
  EXPECT_FALSE(LooksShared({Info("past_key_0", {1, 2, 16, 8})}, {Info("present_key_0", {1, 2, 17, 8})}, kv));
  // an empty static past (a prefill-only export) is no buffer
  EXPECT_FALSE(LooksShared({Info("past_key_0", {1, 2, 0, 8})}, {Info("present_key_0", {1, 2, 0, 8})}, kv));
  EXPECT_FALSE(LooksShared({Info("past_key_0", {1, 2, 16, 8})}, {Info("present_key_0", {1, 2, 16, 8})}, {}));
}

TEST(StepSessionForm, NamesParseBackAndAnUnknownOneIsInvalidArgument) {
  for (CacheForm f : {CacheForm::kAuto, CacheForm::kFresh, CacheForm::kBound, CacheForm::kShared})
    EXPECT_EQ(ParseCacheForm(CacheFormName(f)).value(), f);
  auto bad = ParseCacheForm("pinned");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "--cache-form pinned: expected auto, fresh, bound or shared");
}

}  // namespace
}  // namespace parity
