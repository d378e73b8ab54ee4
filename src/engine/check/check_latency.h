// How many runs check's runtime stage times per config, and which of them it
// had already made (not a public header; check_runtime.cc). A cheap config
// keeps its untimed warm-ups and --runs; a costly one (its --runs do not fit
// --latency-seconds) stops once its estimate is stable and counts the check's
// own runs of the sample instead of repeating them (issue 55).
#pragma once

#include <string>
#include <string_view>

#include "engine/bench/latency.h"
#include "engine/check/check.h"

namespace parity::check_internal {

// A costly config's timed runs stop once the standard error of their mean is
// within this fraction of it (LatencyStable; about +-10% at 95%): the check's
// latency is indicative, `parity bench` measures.
inline constexpr double kStableLatency = 0.05;
// How much longer than determinism's re-run a costly session's first run of
// the sample may take and still be timed (CheckLatency): the spread of a
// stable estimate.
inline constexpr double kFirstRunSpread = 2 * kStableLatency;

// How many warm-up and timed runs of `o` fit in its budget, judged by one
// run of `run_ms`; a costly config's stop once stable.
LatencyOptions BudgetedLatency(const CheckOptions& o, double run_ms);

// A config's timed runs (`which`: "reference" or "target"), given
// determinism's re-run of `run_ms` on the session and `first_ms`, the
// session's first run of the same sample when the check timed it (the
// reference's pass, the target's numerics run; 0: not timed). A costly reference's, unless --time-reference, are
// determinism's re-run alone. Without a warm-up (every costly config),
// determinism's re-run is the first timed run; a costly session's first run
// counts before it when no slower than it by more than kFirstRunSpread (else
// it was a warm-up). Those runs are LatencyOptions::earlier_ms: counted, not
// run again.
LatencyOptions CheckLatency(const CheckOptions& o, std::string_view which, double run_ms, double first_ms);

// For a latency finding: which of its runs were the check's own
// (LatencyStats::reused_runs), " (2 the check's own: ...)"; empty when none.
std::string OwnRuns(const LatencyStats& l);

}  // namespace parity::check_internal
