// Console form of `parity bench`'s result: the per-config table and, with
// --fusions, the per-fusion trade table.
#include <fmt/format.h>

#include "report/bench_report.h"

namespace parity {
namespace {

std::string Mib(int64_t bytes) { return fmt::format("{:.1f}", static_cast<double>(bytes) / (1 << 20)); }

std::string Err(double v) { return v < 0 ? "-" : fmt::format("{:.3g}", v); }

void PrintConfigs(const BenchReport& r, std::FILE* out) {
  fmt::print(out, "{}: sample '{}' ({}), {} timed run(s) after {} warm-up\n", r.model, r.sample,
             r.input_summary, r.runs, r.warmup);
  fmt::print(out, "onnxruntime {} ({})\n", r.ort.version, r.ort.library);
  fmt::print(out, "{:<28} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>11} {:>12}\n", "config", "create ms",
             "mean ms", "p50 ms", "p95 ms", "p99 ms", "peak MiB", "session MiB",
             r.reference.empty() ? "max_abs" : "max_abs vs " + r.reference);
  for (const auto& c : r.configs) {
    if (!c.error.empty()) {
      fmt::print(out, "{:<28} failed: {}\n", c.label, c.error);
      continue;
    }
    const auto& l = c.latency;
    fmt::print(out, "{:<28} {:>10.1f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>10} {:>11} {:>12}{}\n", c.label,
               c.session_creation_ms, l.mean_ms, l.p50_ms, l.p95_ms, l.p99_ms, Mib(c.peak_rss_bytes),
               Mib(c.session_rss_bytes), Err(c.max_abs_vs_reference),
               c.nonfinite_mismatch ? " (nan/inf differ)" : "");
  }
}

void PrintFusions(const BenchReport& r, std::FILE* out) {
  if (!r.fusions_requested) return;
  if (r.fusions.empty()) {
    fmt::print(out, "\nfusions: ORT reported no optimizer changing the graph at '{}'\n", r.fused_config);
    return;
  }
  fmt::print(out,
      "\nfusions switched off one at a time from '{}' (buys: p50 without - p50 with; costs: error with - "
      "error without)\n",
      r.fused_config);
  fmt::print(out, "{:<36} {:>14} {:>12} {:>16} {:>12}  {}\n", "optimizer", "p50 without ms", "buys ms",
             "max_abs without", "costs", "note");
  for (const auto& f : r.fusions) {
    if (!f.without.error.empty()) {
      fmt::print(out, "{:<36} failed: {}\n", f.optimizer, f.without.error);
      continue;
    }
    fmt::print(out, "{:<36} {:>14.3f} {:>12.3f} {:>16} {:>12}  {}\n", f.optimizer, f.without.latency.p50_ms,
               f.speed_ms, Err(f.without.max_abs_vs_reference), fmt::format("{:.3g}", f.precision_cost),
               f.switched_off ? "" : "ORT still applied it (cannot be switched off by this name)");
  }
}

}  // namespace

void PrintBenchReport(const BenchReport& r, std::FILE* out) {
  PrintConfigs(r, out);
  PrintFusions(r, out);
}

}  // namespace parity
