// Terminal writer of the check report: the verdict, each stage with its
// status, the failed tests with their reasons, the worst outputs and one
// latency line per config. And a progress bar for long runs.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "engine/check/check_result.h"
#include "report/console/console_table.h"

namespace parity {

// The summary as text; ANSI colour only when style.color. Lists at most
// style.max_rows failed tests and outputs, then says how many more.
std::string FormatCheckSummary(const CheckReport& report, const ConsoleStyle& style);

// Prints FormatCheckSummary to `out`, in colour when `out` is a terminal and
// NO_COLOR is unset.
void PrintCheckSummary(const CheckReport& report, std::FILE* out);

// "[#####     ] 5/10 label" (no \r): `width` cells, done clamped to [0, total].
std::string FormatProgressBar(size_t done, size_t total, std::string_view label, int width = 30);

// A progress bar redrawn in place on stderr (\r, then cleared by Finish), and
// silent when stderr is not a terminal, so logs and CI output stay clean.
// Not thread-safe: update it from one thread.
class ProgressBar {
 public:
  explicit ProgressBar(size_t total, std::FILE* out = stderr);
  // Same, enabled or not regardless of the terminal (tests).
  ProgressBar(size_t total, std::FILE* out, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Redraws with `done` steps finished, naming the current step.
  void Update(size_t done, std::string_view label);
  // Advances by one step.
  void Step(std::string_view label) { Update(done_ + 1, label); }
  // Erases the bar (once); called by the destructor.
  void Finish();

  bool enabled() const { return enabled_; }

 private:
  size_t total_;
  size_t done_ = 0;
  std::FILE* out_;
  bool enabled_;
  size_t last_width_ = 0;  // characters drawn last time, to blank leftovers
};

}  // namespace parity
