// The baseline's memory budget: the plan against --max-memory, its default,
// and the sizes the flag takes (docs/baseline.md "Memory").
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "engine/baseline/baseline.h"

namespace parity {
namespace {

TEST(Baseline, MemoryPlanSubtractsWhatTheProcessHoldsAndRefusesATooSmallLimit) {
  constexpr int64_t kMiB = 1 << 20;
  MemoryPlanInput in{.limit_bytes = 256 * kMiB,
                     .resident_bytes = 60 * kMiB,
                     .initializer_bytes = 0,
                     .output_bytes = 16 * kMiB,
                     .largest_bytes = 16 * kMiB,
                     .largest_observed_bytes = 16 * kMiB};
  auto plan = PlanBaselineMemory(in);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(plan->reserved_bytes, kSessionOverheadBytes + 64 * kMiB);
  EXPECT_EQ(plan->batch_bytes, (256 * kMiB - 60 * kMiB - plan->reserved_bytes) / kBatchCostFactor);
  in.limit_bytes = 128 * kMiB;
  auto refused = PlanBaselineMemory(in);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("too small"), std::string::npos) << refused.error().message();
  EXPECT_NE(refused.error().message().find("at least --max-memory"), std::string::npos);
}

TEST(Baseline, MemoryPlanReservesOneCopyOfWeightsReadInPlace) {
  constexpr int64_t kMiB = 1 << 20;
  MemoryPlanInput in{.limit_bytes = 4096 * kMiB, .resident_bytes = 60 * kMiB, .initializer_bytes = 1024 * kMiB};
  const auto inlined = PlanBaselineMemory(in);
  in.weights_read_in_place = true;  // external data: ORT's copy only
  const auto in_place = PlanBaselineMemory(in);
  ASSERT_TRUE(inlined && in_place);
  EXPECT_EQ(inlined->reserved_bytes - in_place->reserved_bytes, 1024 * kMiB);
}

// The default budget follows the model's weights: a 4 GiB-weight model read
// in place is planned without --max-memory where memory allows (the fixed
// default, at most 4 GiB, refused it).
TEST(Baseline, DefaultBudgetFollowsTheWeights) {
  constexpr int64_t kMiB = 1 << 20;
  const int64_t weights = 4096 * kMiB;
  EXPECT_EQ(DefaultBaselineMemory(0), DefaultBaselineMemory());
  EXPECT_GE(DefaultBaselineMemory(weights), DefaultBaselineMemory());
  const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  EXPECT_LE(DefaultBaselineMemory(weights), std::max(DefaultBaselineMemory(), physical / 4 * 3));
  if (physical / 4 * 3 < 2 * weights + 1024 * kMiB) GTEST_SKIP() << "under 12 GiB of memory";
  EXPECT_EQ(DefaultBaselineMemory(weights), 2 * weights + 1024 * kMiB);
  MemoryPlanInput in{.limit_bytes = DefaultBaselineMemory(),
                     .resident_bytes = 60 * kMiB,
                     .initializer_bytes = weights,
                     .output_bytes = 256 * kMiB,
                     .largest_bytes = 256 * kMiB,
                     .largest_observed_bytes = 256 * kMiB,
                     .weights_read_in_place = true};
  EXPECT_FALSE(PlanBaselineMemory(in));  // the fixed default refuses it
  in.limit_bytes = DefaultBaselineMemory(weights);
  auto plan = PlanBaselineMemory(in);
  EXPECT_TRUE(plan) << plan.error().message();
}

TEST(ParseMemorySize, AcceptsUnitsAndRefusesNonsense) {
  EXPECT_EQ(*ParseMemorySize("512M"), int64_t{512} << 20);
  EXPECT_EQ(*ParseMemorySize("2G"), int64_t{2} << 30);
  EXPECT_EQ(*ParseMemorySize("1.5GiB"), int64_t{3} << 29);
  EXPECT_EQ(*ParseMemorySize("4096"), 4096);
  EXPECT_FALSE(ParseMemorySize("lots"));
  EXPECT_FALSE(ParseMemorySize("-1G"));
  EXPECT_FALSE(ParseMemorySize("3X"));
}

}  // namespace
}  // namespace parity
