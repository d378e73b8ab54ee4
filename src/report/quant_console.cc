// Console table of the per-layer precision report (docs/quantized.md).
#include <fmt/format.h>

#include <cmath>

#include "report/quant_report.h"

namespace parity {

namespace {

std::string Db(const QuantLoss& l) {
  if (!l.measured) return "-";
  return std::isinf(l.sqnr_db) ? "exact" : fmt::format("{:.1f}", l.sqnr_db);
}

std::string Steps(const QuantLoss& l, double step) {
  if (!l.measured || step <= 0) return "-";
  return fmt::format("{:.2f}", l.max_steps);
}

std::string Short(const std::string& s, size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n + 3); }

}  // namespace

void PrintQuantTable(const QuantReport& r, std::FILE* out, size_t max_rows) {
  fmt::print(out, "  precision per layer ({}; rule: {}); {} of {} conv/matmul layers matched\n", r.kind, r.rule,
             r.compute_matched, r.compute_layers);
  fmt::print(out, "    {:<36} {:<12} {:>8} {:>7} {:>9} {:>7} {:>9} {:>9}\n", "node", "op", "sqnr_dB", "steps",
             "local_dB", "l_steps", "inh_dB", "weight_dB");
  size_t shown = 0;
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const auto& l = r.layers[i];
    if (max_rows > 0 && shown == max_rows) {
      fmt::print(out, "    ... {} more layers (--json for all)\n", r.layers.size() - shown);
      break;
    }
    ++shown;
    const std::string inh = std::isinf(l.inherited_sqnr_db) ? "exact" : fmt::format("{:.1f}", l.inherited_sqnr_db);
    fmt::print(out, "    {:<36} {:<12} {:>8} {:>7} {:>9} {:>7} {:>9} {:>9}{}\n", Short(l.node, 36), l.op_type,
               Db(l.cumulative), Steps(l.cumulative, l.step), Db(l.local), Steps(l.local, l.step), inh,
               l.weight ? Db(l.weight->loss) : "-", r.worst_local && *r.worst_local == i ? "  <- worst local" : "");
  }
  if (r.worst_local) {
    const auto& w = r.layers[*r.worst_local];
    fmt::print(out, "  worst local loss: {} ({}{}) local SQNR {} dB, {} steps: the layer to keep in float\n", w.node,
               w.op_type, w.module.empty() ? "" : ", module " + w.module, Db(w.local), Steps(w.local, w.step));
  }
  for (const auto& u : r.unmatched) fmt::print(out, "  unmatched: {} ({}): {}\n", u.node, u.op_type, u.reason);
}

}  // namespace parity
