#include "engine/bench/latency.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>

#include "ort/run_limits.h"

namespace parity {
namespace {

// NumPy's default percentile: linear interpolation at q*(n-1).
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

int64_t VmHwmBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace

bool LatencyStable(const std::vector<double>& samples_ms, double within) {
  const size_t n = samples_ms.size();
  if (within <= 0 || n < static_cast<size_t>(kMinLatencyRuns)) return false;
  const double mean = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(n);
  double squares = 0;
  for (double v : samples_ms) squares += (v - mean) * (v - mean);
  const double stddev = std::sqrt(squares / static_cast<double>(n - 1));
  return stddev / std::sqrt(static_cast<double>(n)) <= within * mean;
}

LatencyStats SummarizeLatency(std::vector<double> samples_ms) {
  LatencyStats s;
  s.runs = static_cast<int>(samples_ms.size());
  if (samples_ms.empty()) return s;
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  s.p50_ms = Percentile(sorted, 0.50);
  s.p95_ms = Percentile(sorted, 0.95);
  s.p99_ms = Percentile(sorted, 0.99);
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.samples_ms = std::move(samples_ms);
  return s;
}

Result<LatencyStats> MeasureLatency(const ort::Session& session, const TensorSet& inputs,
                                    const LatencyOptions& options) {
  if (options.runs < 1)
    return InvalidArgument(fmt::format("latency runs must be >= 1, got {}", options.runs));
  if (options.warmup < 0)
    return InvalidArgument(fmt::format("warm-up runs must be >= 0, got {}", options.warmup));
  // Unwatched (ort/run_limits.h): a check times a sample that already ran
  // within its limits, and a watchdog thread per run would be inside the
  // clock (tens of microseconds against a sub-millisecond model).
  ort::ScopedRunLimits unwatched({});

  for (int i = 0; i < options.warmup; ++i) {
    auto out = session.Run(inputs);
    if (!out) return std::unexpected(std::move(out.error()).With(fmt::format("warm-up run {}", i + 1)));
  }

  using Clock = std::chrono::steady_clock;
  const int min_runs = std::min(options.runs, kMinLatencyRuns);
  const auto budget = std::chrono::duration<double>(options.max_seconds);
  std::vector<double> samples = options.earlier_ms;
  samples.reserve(static_cast<size_t>(std::max<int>(options.runs, static_cast<int>(samples.size()))));
  // The earlier runs count toward the budget as they counted toward the caller's.
  const auto started =
      Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(
                         std::accumulate(samples.begin(), samples.end(), 0.0)));
  auto done = [&](Clock::time_point now) {
    const int n = static_cast<int>(samples.size());
    return n >= options.runs || (n >= min_runs && (now - started >= budget ||
                                                    LatencyStable(samples, options.stable_within)));
  };
  while (!done(Clock::now())) {
    const auto t0 = Clock::now();
    auto out = session.Run(inputs);
    const auto t1 = Clock::now();
    if (!out) return std::unexpected(std::move(out.error()).With(fmt::format("timed run {}", samples.size() + 1)));
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  LatencyStats stats = SummarizeLatency(std::move(samples));
  stats.reused_runs = static_cast<int>(options.earlier_ms.size());
  return stats;
}

int64_t PeakRssBytes() {
  // VmHWM first: it is this process's own high-water mark, reset by exec.
  // getrusage's ru_maxrss is not: Linux carries it across fork and exec, so a
  // parity started by a 1 GiB Python process reported that process's peak
  // (issue 54: 1055 MiB for a check that needed about 170).
  if (const int64_t hwm = VmHwmBytes(); hwm > 0) return hwm;
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) == 0 && usage.ru_maxrss > 0) {
    return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
  }
  return 0;
}

int64_t CurrentRssBytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  if (!(in >> size_pages >> resident_pages)) return 0;
  long page = sysconf(_SC_PAGESIZE);
  return resident_pages * (page > 0 ? page : 4096);
}

}  // namespace parity
