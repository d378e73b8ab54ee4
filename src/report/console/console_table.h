// Terminal rendering of comparison results: one row per tensor, worst
// first, failures highlighted (ANSI colour only when writing to a terminal).
#pragma once

#include <cstdio>
#include <string>

#include "compare/compare_sets.h"

namespace parity {

struct ConsoleStyle {
  bool color = false;  // ANSI escapes
  size_t max_rows = 50;  // rows beyond this are summarised in one line
};

// Whether `out` is a terminal that takes colour (and NO_COLOR is unset).
bool WantsColor(std::FILE* out);
inline bool StdoutWantsColor() { return WantsColor(stdout); }

// A number for a terminal column: 3 significant digits; "nan", "inf", "-inf".
std::string ShortNumber(double v);
// "0.999876", or "1-3.2e-09" when it is within 5e-7 of 1 but not 1 (a
// failing row must not read "cosine 1").
std::string CosineText(double cosine);
// The metrics' cosine, or "n/a (no finite pairs)" when no element is finite on
// both sides (an all-NaN output): the metric's 1 there means nothing was compared.
std::string CosineText(const TensorMetrics& m);

// Row order of every console table: whether `a` is shown above `b` —
// failures first, then passes, then unchecked rows; within each, by the one
// error score (compare/judge.h's ErrorScore), highest first.
bool WorseRow(const TensorComparison& a, const TensorComparison& b);

std::string FormatComparisonTable(const SetComparison& s, const ConsoleStyle& style);

}  // namespace parity
