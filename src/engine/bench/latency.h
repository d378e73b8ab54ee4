// Latency and memory measurement shared by `parity bench` and the runtime
// stage of `parity check`.
//
// MeasureLatency times Session::Run with std::chrono::steady_clock around
// each call only (input conversion inside Run is part of what a parity user
// pays, so it is timed; no other work is). Warm-up runs are not timed.
//
// Thread-safety: MeasureLatency may run concurrently with other Runs on the
// same session, but then the numbers measure the contention too.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "engine/bench/latency_stats.h"
#include "ort/session.h"

namespace parity {

struct LatencyOptions {
  int warmup = 3;           // untimed runs first (>= 0)
  int runs = 20;            // timed runs wanted (>= 1)
  double max_seconds = 10;  // stop timing after this long, once at least kMinRuns ran
  // Stop timing once the estimate is stable (LatencyStable): at least
  // kMinLatencyRuns timed runs and the mean's standard error within this
  // fraction of the mean. 0: never (the runs or the budget stop it).
  double stable_within = 0;
  // Runs of the same session and inputs already timed by the caller (a
  // check's determinism re-run): they count toward `runs`, the stops and the
  // result, first in run order, and are not run again.
  std::vector<double> earlier_ms;
};

// Fewer timed runs than this are never reported, even past max_seconds
// (unless LatencyOptions::runs asks for fewer).
inline constexpr int kMinLatencyRuns = 3;

// Whether `samples_ms` estimate the latency well enough: at least
// kMinLatencyRuns of them and the standard error of their mean (sample
// standard deviation / sqrt(n)) at most `within` x their mean. False when
// `within` <= 0.
bool LatencyStable(const std::vector<double>& samples_ms, double within);

// Statistics over `samples_ms` (in run order, kept in the result): mean,
// p50/p95/p99 (linear interpolation between order statistics, NumPy's
// default), min, max. Empty input gives all zeros.
LatencyStats SummarizeLatency(std::vector<double> samples_ms);

// Warms up, then times runs until `options.runs`, `options.max_seconds` or a
// stable estimate (`options.stable_within`), with at least min(runs,
// kMinLatencyRuns) timed runs, `options.earlier_ms` among them. Errors: the first
// failing Run's error (with "warm-up run N" or "timed run N" as context);
// kInvalidArgument when runs < 1 or warmup < 0.
Result<LatencyStats> MeasureLatency(const ort::Session& session, const TensorSet& inputs,
                                    const LatencyOptions& options = {});

// The process's peak resident set size in bytes (/proc/self/status VmHWM,
// which exec resets; falls back to getrusage ru_maxrss, which Linux carries
// over from the parent across fork and exec). 0 when neither is available.
// This is a high-water mark: it never goes down within a process.
int64_t PeakRssBytes();

// The process's current resident set size in bytes (/proc/self/statm); 0
// when unavailable.
int64_t CurrentRssBytes();

}  // namespace parity
