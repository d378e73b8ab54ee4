// check's latency runs per config (check_latency.h).
#include "engine/check/check_latency.h"

#include <fmt/format.h>

#include <algorithm>

namespace parity::check_internal {

LatencyOptions BudgetedLatency(const CheckOptions& o, double run_ms) {
  LatencyOptions l{.warmup = o.latency_warmup, .runs = o.latency_runs, .max_seconds = o.latency_seconds};
  const double fit = run_ms > 0 ? o.latency_seconds * 1000 / run_ms : l.runs + l.warmup;
  const int fits = static_cast<int>(std::min<double>(fit, l.runs + l.warmup));
  l.runs = std::clamp(fits, 1, l.runs);
  l.warmup = std::clamp(fits - l.runs, 0, l.warmup);
  // Runs too costly for --runs to fit the budget stop once the estimate is
  // stable (a 0.28 s run of a 4 GB model: 3 to 6 runs, not 7); cheaper ones
  // keep every run asked for.
  if (fit < o.latency_runs) l.stable_within = kStableLatency;
  return l;
}

LatencyOptions CheckLatency(const CheckOptions& o, std::string_view which, double run_ms, double first_ms) {
  LatencyOptions l = BudgetedLatency(o, run_ms);
  const bool costly = l.stable_within > 0;
  // What is deployed, and timed, is the target; a cheap reference is timed as it is.
  if (which == "reference" && costly && !o.time_reference) l = {.warmup = 0, .runs = 1, .max_seconds = 0};
  // Without a warm-up asked for, determinism's second run is the first timed
  // run (a run of a 500 MB model is 0.2 s here, issue 26).
  if (l.warmup == 0) l.earlier_ms = {run_ms};
  // A costly session's first run of the sample: its one-off work (the
  // arena's growth, first-touch pages) is lost in a run this long unless it
  // shows, and then it was the warm-up. A cheap config keeps its warm-ups.
  if (costly && l.runs > 1 && first_ms > 0 && first_ms <= run_ms * (1 + kFirstRunSpread))
    l.earlier_ms.insert(l.earlier_ms.begin(), first_ms);
  return l;
}

std::string OwnRuns(const LatencyStats& l) {
  if (l.reused_runs <= 0) return "";
  return fmt::format(" ({} the check's own: {})", l.reused_runs,
                     l.reused_runs == 1 ? "determinism's re-run" : "its first run of the sample and determinism's re-run");
}

}  // namespace parity::check_internal
