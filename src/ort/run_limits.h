// The limits every ORT run obeys while a scope sets them (issue 56, class 3
// and 12; issue 51 item 1): one time limit and one memory limit per run of
// a sample, enforced by Session::Run itself, so every stage that runs a
// sample (the check's pass, the layer curve, locate and its drill-down, the
// TF32 and arithmetic re-runs, the control-flow probes, generation) is
// bounded without each passing the limit on.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace parity::ort {

struct RunLimits {
  double seconds = 0;        // a run still going after this long is stopped; 0: no limit
  int64_t memory_bytes = 0;  // a run that grows the process's resident memory by more is stopped; 0: none
};

// The limits of every Session::Run that names no time limit of its own,
// while this scope lives (the process's: runs on any thread); the outer
// limits come back when it ends. Not nested across threads.
class ScopedRunLimits {
 public:
  explicit ScopedRunLimits(RunLimits limits);
  ~ScopedRunLimits();
  ScopedRunLimits(const ScopedRunLimits&) = delete;
  ScopedRunLimits& operator=(const ScopedRunLimits&) = delete;
  // Changes the limits this scope set (the check's default time limit is
  // known once the reference's first sample has been timed).
  void Set(RunLimits limits);

 private:
  RunLimits outer_;
};

// The limits in force (none outside every scope).
RunLimits CurrentRunLimits();

// How a watched run ends: the terminate flag ORT checks between kernels is
// set past the time limit, or once the process's resident memory has grown
// by more than the memory limit since the run began (polled every 10 ms: a
// single kernel that allocates more at once is not stopped mid-way; ORT's
// own allocation failure is then the error).
inline constexpr std::string_view kRunOverMemory = "grew the process's memory past its limit of";
// Whether `e` is the error of a run stopped at its memory limit, or of a
// run ORT could not allocate memory for.
bool IsRunOverMemory(const Error& e);

// The default memory limit of one run: half of what this process may use
// (the machine's physical memory, or the cgroup's memory.max when lower).
int64_t DefaultRunMemoryBytes();

// The process's resident memory now, in bytes (/proc/self/statm); 0 when
// unknown.
int64_t ResidentBytes();

}  // namespace parity::ort
