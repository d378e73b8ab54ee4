// check's latency runs per config (check_latency.h): cheap configs keep
// their warm-ups and --runs; a costly one counts the check's own runs of the
// sample, its session's first run only when it shows no warm-up.
#include "engine/check/check_latency.h"

#include <gtest/gtest.h>

#include <vector>

namespace parity::check_internal {
namespace {

CheckOptions Defaults() { return CheckOptions{}; }  // --runs 20, --warmup 3, --latency-seconds 2

TEST(CheckLatency, ACheapConfigKeepsItsWarmUpsAndRunsAndTakesNoRunOfTheChecks) {
  // 1 ms a run: 23 fit in 2 s many times over.
  for (const char* which : {"reference", "target"}) {
    const LatencyOptions l = CheckLatency(Defaults(), which, /*run_ms=*/1.0, /*first_ms=*/1.0);
    EXPECT_EQ(l.warmup, 3) << which;
    EXPECT_EQ(l.runs, 20) << which;
    EXPECT_EQ(l.stable_within, 0) << which;
    EXPECT_TRUE(l.earlier_ms.empty()) << which;  // its warm-ups come first: nothing of the check's is timed
  }
}

TEST(CheckLatency, ACostlyTargetCountsDeterminismsReRunAndAFirstRunWithoutWarmUpCost) {
  // 150 ms a run: 13 fit in 2 s, fewer than --runs 20.
  const LatencyOptions l = CheckLatency(Defaults(), "target", 150, 155);
  EXPECT_EQ(l.warmup, 0);
  EXPECT_EQ(l.runs, 13);
  EXPECT_EQ(l.stable_within, kStableLatency);
  EXPECT_EQ(l.earlier_ms, (std::vector<double>{155, 150}));  // in run order: the first, then the re-run
  // Its twin: a first run slower than the spread allows was a warm-up.
  const LatencyOptions warm = CheckLatency(Defaults(), "target", 150, 150 * (1 + kFirstRunSpread) + 1);
  EXPECT_EQ(warm.earlier_ms, std::vector<double>{150});
  // Not timed by the check (the target's numerics run): determinism's re-run alone.
  EXPECT_EQ(CheckLatency(Defaults(), "target", 150, 0).earlier_ms, std::vector<double>{150});
}

TEST(CheckLatency, ACostlyReferenceIsDeterminismsReRunAloneUnlessTimed) {
  const LatencyOptions l = CheckLatency(Defaults(), "reference", 150, 150);
  EXPECT_EQ(l.runs, 1);
  EXPECT_EQ(l.earlier_ms, std::vector<double>{150});
  CheckOptions timed = Defaults();
  timed.time_reference = true;
  EXPECT_EQ(CheckLatency(timed, "reference", 150, 150).earlier_ms, (std::vector<double>{150, 150}));
}

TEST(CheckLatency, WhatTheBudgetFitsBoundsTheRunsEvenWhenTheChecksOwnAreThem) {
  // 700 ms a run (a loaded machine): two fit, and the check already made them.
  const LatencyOptions l = CheckLatency(Defaults(), "target", 700, 690);
  EXPECT_EQ(l.runs, 2);
  EXPECT_EQ(l.earlier_ms, (std::vector<double>{690, 700}));
  // A run over the whole budget: one timed run, determinism's re-run.
  EXPECT_EQ(CheckLatency(Defaults(), "target", 2500, 2400).earlier_ms, std::vector<double>{2500});
}

}  // namespace
}  // namespace parity::check_internal
