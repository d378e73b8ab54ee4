#include "report/console/console_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "compare/judge.h"
#include "report/console/ansi.h"

namespace parity {

bool WantsColor(std::FILE* out) {
  // stdout is parity's filtering stream (cli/terminal_guard.h), which has no descriptor.
  int fd = fileno(out);
  if (fd < 0 && out == stdout) fd = STDOUT_FILENO;
  return fd >= 0 && isatty(fd) && std::getenv("NO_COLOR") == nullptr;
}

std::string CosineText(double cosine) {
  if (std::isnan(cosine)) return "nan";
  // A cosine that rounds to 1 on a failing row reads as "identical": show how
  // far from 1 it is instead.
  // (rounding can put it a hair above 1: "1+2.2e-16", never "1--2.2e-16")
  if (cosine != 1 && std::fabs(1 - cosine) < 5e-7)
    return cosine < 1 ? fmt::format("1-{:.1e}", 1 - cosine) : fmt::format("1+{:.1e}", cosine - 1);
  return fmt::format("{:.6f}", cosine);
}

std::string CosineText(const TensorMetrics& m) {
  if (m.count > 0 && m.finite_pairs == 0) return "n/a (no finite pairs)";
  return CosineText(m.cosine);
}

std::string ShortNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", v);
}

bool WorseRow(const TensorComparison& a, const TensorComparison& b) {
  auto rank = [](Verdict v) { return v == Verdict::kFail ? 2 : v == Verdict::kPass ? 1 : 0; };
  if (rank(a.status) != rank(b.status)) return rank(a.status) > rank(b.status);
  if (a.status == Verdict::kUnchecked) return false;
  return a.score > b.score;
}

std::string FormatComparisonTable(const SetComparison& s, const ConsoleStyle& style) {
  std::string out;
  auto paint = [&](const char* color, const std::string& text) {
    return style.color ? std::string(color) + text + ansi::kReset : text;
  };
  for (const auto& f : s.findings) {
    out += paint(f.fatal ? ansi::kRed : ansi::kYellow,
                 fmt::format("{:<9} {}: reference {}, test {}\n", FindingKindName(f.kind), f.name,
                             f.reference, f.test));
  }
  std::vector<const TensorComparison*> rows;
  for (const auto& t : s.tensors) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto* a, const auto* b) { return WorseRow(*a, *b); });
  size_t name_width = 6;
  for (const auto* r : rows) name_width = std::max(name_width, std::min<size_t>(r->name.size(), 48));
  out += fmt::format("{:<6} {:<{}} {:>10} {:>10} {:>10} {:>9} {:>10} {:>12}  {}\n", "status", "tensor",
                     name_width, "max_abs", "max_rel", "rmse", "cosine", "mismatch", "atol/rtol",
                     "worst element (ref -> test)");
  size_t shown = 0;
  for (const auto* r : rows) {
    if (shown++ == style.max_rows) {
      out += fmt::format("... {} more tensor(s)\n", rows.size() - style.max_rows);
      break;
    }
    const auto& m = r->metrics;
    std::string name = r->name.size() > 48 ? "..." + r->name.substr(r->name.size() - 45) : r->name;
    std::string status(VerdictName(r->status));
    const char* color = r->status == Verdict::kFail   ? ansi::kRed
                        : r->status == Verdict::kPass ? ansi::kGreen
                                                      : ansi::kYellow;
    if (r->status == Verdict::kUnchecked) {
      out += fmt::format("{} {:<{}} {}\n", paint(color, fmt::format("{:<6}", status)), name, name_width,
                         r->reason);
      continue;
    }
    std::string worst = m.max_abs_flat_index >= 0
                            ? fmt::format("[{}] {} -> {}", fmt::join(m.max_abs_index, ","),
                                          ShortNumber(m.ref_at_max), ShortNumber(m.test_at_max))
                            : "";
    if (m.nan_mismatch + m.inf_mismatch > 0)
      worst += fmt::format(" nan/inf mismatches {}", m.nan_mismatch + m.inf_mismatch);
    out += fmt::format("{} {:<{}} {:>10} {:>10} {:>10} {:>9} {:>10} {:>12}  {}\n",
                       paint(color, fmt::format("{:<6}", status)), name, name_width, ShortNumber(m.max_abs),
                       ShortNumber(m.max_rel), ShortNumber(m.rmse), CosineText(m),
                       fmt::format("{}/{}", m.mismatches, m.count),
                       fmt::format("{}/{}", ShortNumber(r->tolerance.tolerance.atol),
                                   ShortNumber(r->tolerance.tolerance.rtol)),
                       worst);
    if (r->status == Verdict::kFail && !r->reason.empty()) out += fmt::format("       {}\n", r->reason);
    out += fmt::format("       tolerance: {}\n", r->tolerance.Why());
    for (const auto& w : r->tolerance.warnings) out += paint(ansi::kYellow, fmt::format("       warning: {}\n", w));
  }
  return out;
}

}  // namespace parity
