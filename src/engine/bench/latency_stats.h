// Latency of one config over timed runs, as plain data: filled by
// engine/bench/latency.h (SummarizeLatency, MeasureLatency), carried by
// `parity bench`'s result (bench_result.h) and `parity check`'s performance
// stage (engine/check/check_result.h). Header only, without ORT.
#pragma once

#include <vector>

namespace parity {

struct LatencyStats {
  int runs = 0;
  double mean_ms = 0, p50_ms = 0, p95_ms = 0, p99_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> samples_ms;  // every timed run, for the distribution plot
  // Of `runs`, how many the caller had made before timing and handed over
  // (LatencyOptions::earlier_ms: a check's own runs of the sample on the same
  // session), counted instead of run again; the first of `samples_ms`.
  int reused_runs = 0;
};

}  // namespace parity
