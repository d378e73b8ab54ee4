#include "report/console/baseline_console.h"

#include <fmt/format.h>

#include "report/control_flow_writer.h"
#include "report/text_escape.h"

namespace parity {
namespace {

std::string FormatSample(const BaselineSample& s, bool several) {
  std::string out = several ? fmt::format("sample '{}': ", ConsoleName(s.name)) : "";
  out += fmt::format("{} file(s)", s.files.size());
  if (!s.nondeterministic.empty())
    out += fmt::format(", NON-DETERMINISTIC: {} tensor(s), first '{}'", s.nondeterministic.size(),
                       ConsoleName(s.nondeterministic[0]));
  if (s.first_nan) out += fmt::format(", NaN first in '{}'", ConsoleName(*s.first_nan));
  if (s.first_inf) out += fmt::format(", Inf first in '{}'", ConsoleName(*s.first_inf));
  if (!s.out_of_scale.empty())
    out += fmt::format(", {} tensor(s) far outside the inputs' scale, first '{}'", s.out_of_scale.size(),
                       ConsoleName(s.out_of_scale[0]));
  return out + "\n";
}

}  // namespace

std::string FormatBaselineWritten(const BaselineResult& r, const std::string& model, const std::string& dir,
                                  const std::string& config_label) {
  std::string out = fmt::format(
      "{}: baseline written to {} [{}], {} sample(s), {} run(s) per sample, each observing tensors up to a budget "
      "of {:.1f} MiB (a limit, not a measurement)\n",
      model,
      dir, config_label, r.samples.size(), r.batches, static_cast<double>(r.batch_bytes_limit) / (1 << 20));
  for (const auto& s : r.samples) out += FormatSample(s, r.samples.size() > 1);
  return out + FormatControlFlow(r.control_flow, "");
}

std::string FormatVerifySummary(const VerifyResult& r, const std::string& dir, const std::string& json_path) {
  size_t failed = 0;
  for (const auto& c : r.comparisons) failed += c.status == Verdict::kFail;
  size_t fatal = 0;
  for (const auto& f : r.findings) fatal += f.fatal;
  std::string out = fmt::format("{}: {}: {} file(s) checked, {} problem(s)", dir, r.passed() ? "PASS" : "FAIL",
                                r.files_checked, fatal);
  if (r.model_checked)
    out += fmt::format(", re-run compared {} tensor(s), {} outside tolerance", r.comparisons.size(), failed);
  out += "\n";
  size_t shown = 0;
  for (const auto& f : r.findings) {
    if (shown++ == kVerifyFindingsShown) {
      out += fmt::format("... {} more finding(s){}\n", r.findings.size() - kVerifyFindingsShown,
                         json_path.empty() ? " (--json FILE lists them all)" : fmt::format(" (all in {})", json_path));
      break;
    }
    out += fmt::format("  {}: {}\n", f.fatal ? "FAIL" : "note", f.message);
  }
  for (const auto& c : r.changes)
    out += fmt::format("changed since the baseline: {}: '{}' -> '{}'\n", c.field, c.recorded, c.now);
  if (!r.passed() && r.model_checked && failed > 0 && !r.changes.empty())
    out += "the differences may come from what changed since the baseline (listed above)\n";
  return out;
}

}  // namespace parity
