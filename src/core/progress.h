// Progress of long work deep in the engine (a baseline's tensor files, a
// drill-down's narrowing) for whoever shows it: the command line installs a
// sink that draws a bar on a terminal (cli/terminal_progress.h); without one,
// ReportProgress does nothing. Header-only so that a loop reports with one
// call and no option threaded through every layer in between.
// Not thread-safe: set the sink before the work, report from one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>
#include <utility>

namespace parity {

// what: the work ("baseline typical"), done of total steps.
using ProgressSink = std::function<void(std::string_view what, size_t done, size_t total)>;

inline ProgressSink& ProgressSinkSlot() {
  static ProgressSink sink;
  return sink;
}

// Installs `sink` (an empty one removes it); returns the one it replaces.
inline ProgressSink SetProgressSink(ProgressSink sink) { return std::exchange(ProgressSinkSlot(), std::move(sink)); }

inline void ReportProgress(std::string_view what, size_t done, size_t total) {
  if (const ProgressSink& sink = ProgressSinkSlot()) sink(what, done, total);
}

}  // namespace parity
