#include "engine/bench/latency.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/runner/session_run.h"
#include "onnx/builtin_models.h"

namespace parity {
namespace {

TEST(SummarizeLatency, PercentilesInterpolateLikeNumPy) {
  // numpy.percentile([1..10], [50, 95, 99]) == [5.5, 9.55, 9.91]
  std::vector<double> samples = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  LatencyStats s = SummarizeLatency(samples);
  EXPECT_EQ(s.runs, 10);
  EXPECT_DOUBLE_EQ(s.mean_ms, 5.5);
  EXPECT_DOUBLE_EQ(s.p50_ms, 5.5);
  EXPECT_NEAR(s.p95_ms, 9.55, 1e-12);
  EXPECT_NEAR(s.p99_ms, 9.91, 1e-12);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 10);
  EXPECT_EQ(s.samples_ms, samples);  // run order kept
}

TEST(SummarizeLatency, EmptyIsAllZeros) {
  LatencyStats s = SummarizeLatency({});
  EXPECT_EQ(s.runs, 0);
  EXPECT_EQ(s.p50_ms, 0);
}

Sample ConvBnReluSample() {
  Tensor t(DType::kFloat32, {1, 3, 224, 224});
  for (float& v : t.mutable_view<float>()) v = 0.5f;
  Sample s{"default", {}};
  EXPECT_TRUE(s.tensors.Add("input", t));
  return s;
}

TEST(MeasureLatency, TimesTheRequestedRuns) {
  auto session = CreateSession(ConvBnRelu(), RunConfig{}, "conv_bn_relu");
  ASSERT_TRUE(session.has_value()) << session.error().message();
  auto stats = MeasureLatency(*session, ConvBnReluSample().tensors, {.warmup = 1, .runs = 5});
  ASSERT_TRUE(stats.has_value()) << stats.error().message();
  EXPECT_EQ(stats->runs, 5);
  EXPECT_EQ(stats->samples_ms.size(), 5u);
  EXPECT_GT(stats->min_ms, 0);
  EXPECT_LE(stats->min_ms, stats->p50_ms);
  EXPECT_LE(stats->p50_ms, stats->p99_ms);
  EXPECT_LE(stats->p99_ms, stats->max_ms);
}

TEST(MeasureLatency, StopsAtTheTimeBudgetAfterThreeRuns) {
  auto session = CreateSession(ConvBnRelu(), RunConfig{}, "conv_bn_relu");
  ASSERT_TRUE(session.has_value());
  auto stats =
      MeasureLatency(*session, ConvBnReluSample().tensors, {.warmup = 0, .runs = 1000, .max_seconds = 0});
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->runs, kMinLatencyRuns);
}

TEST(LatencyStable, NeedsThreeRunsWithASmallStandardError) {
  EXPECT_TRUE(LatencyStable({280, 281, 279}, 0.05));      // SE 0.2% of the mean
  EXPECT_FALSE(LatencyStable({280, 281}, 0.05));          // under kMinLatencyRuns
  EXPECT_FALSE(LatencyStable({100, 300, 200}, 0.05));     // SE 29% of the mean
  EXPECT_TRUE(LatencyStable({100, 300, 200}, 0.30));
  EXPECT_FALSE(LatencyStable({280, 281, 279}, 0));        // 0: never
  // A noisy run among steady ones keeps it timing until the mean settles.
  EXPECT_FALSE(LatencyStable({280, 420, 279}, 0.05));
  EXPECT_TRUE(LatencyStable({280, 420, 279, 281, 280, 282, 279, 281, 280, 281, 279, 280}, 0.05));
}

TEST(MeasureLatency, StopsOnceStableAndCountsEarlierRuns) {
  auto session = CreateSession(ConvBnRelu(), RunConfig{}, "conv_bn_relu");
  ASSERT_TRUE(session.has_value());
  const TensorSet inputs = ConvBnReluSample().tensors;
  // Any spread is "stable" within 100x the mean: the minimum of runs, then stop.
  auto stable = MeasureLatency(*session, inputs, {.warmup = 0, .runs = 1000, .max_seconds = 100, .stable_within = 100});
  ASSERT_TRUE(stable.has_value());
  EXPECT_EQ(stable->runs, kMinLatencyRuns);
  EXPECT_EQ(stable->reused_runs, 0);
  // Never stable: the runs asked for, the earlier ones first and not re-run.
  auto counted = MeasureLatency(*session, inputs, {.warmup = 0, .runs = 5, .max_seconds = 100, .earlier_ms = {7.5, 8.5}});
  ASSERT_TRUE(counted.has_value());
  ASSERT_EQ(counted->runs, 5);
  EXPECT_EQ(counted->samples_ms[0], 7.5);
  EXPECT_EQ(counted->samples_ms[1], 8.5);
  EXPECT_EQ(counted->reused_runs, 2);  // said in the report: the check's own runs
  // As many earlier runs as asked for: nothing more runs.
  auto none = MeasureLatency(*session, inputs, {.warmup = 0, .runs = 1, .earlier_ms = {9.5}});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->samples_ms, std::vector<double>{9.5});
  EXPECT_EQ(none->reused_runs, 1);
}

TEST(MeasureLatency, RejectsBadOptionsAndReportsRunErrors) {
  auto session = CreateSession(ConvBnRelu(), RunConfig{}, "conv_bn_relu");
  ASSERT_TRUE(session.has_value());
  auto bad = MeasureLatency(*session, ConvBnReluSample().tensors, {.runs = 0});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);

  auto missing = MeasureLatency(*session, TensorSet{}, {.warmup = 1});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("warm-up run 1"), std::string::npos) << missing.error().message();
}

TEST(Rss, PeakIsAtLeastCurrentAndPositive) {
  int64_t current = CurrentRssBytes();
  int64_t peak = PeakRssBytes();
  EXPECT_GT(current, 0);
  // The kernel's per-thread RSS counters are synced lazily (up to 64 pages
  // per thread), so the two reads may disagree by a little.
  EXPECT_GE(peak + (int64_t{8} << 20), current);
}

}  // namespace
}  // namespace parity
