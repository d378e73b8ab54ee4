// Console table of the per-layer precision report (docs/quantized.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/quant_report.h"
#include "report/text_escape.h"

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

// A fused chain narrowed to its kernel (engine/locate/step_chain.h).
std::string Chain(const QuantStepTensor& t) {
  if (t.chain.empty()) return "";
  std::vector<std::string> steps;
  for (const auto& k : t.chain) steps.push_back(fmt::format("{} {:.3g}", k.node, k.steps));
  return fmt::format("      the fused node covers {} kernels, each alone: {}; {}\n", t.chain.size(), fmt::join(steps, ", "),
                     t.kernel.empty() ? "no kernel alone shows it: the steps add up along the chain"
                                      : fmt::format("narrowed to '{}'", t.kernel));
}

std::string FormatDeployed(const QuantDeployed& d) {
  std::string out = fmt::format("  quantized tensors in steps ({}): {} judged, {} exact, {} rounding (<= 1 step, not a "
                                "failure), {} failed\n", d.rule, d.judged, d.exact, d.rounding, d.failed);
  if (d.first_rounding)
    out += fmt::format("    first step at '{}' (kernel '{}'): {:.2f} step\n{}", d.first_rounding->tensor,
                       d.first_rounding->fused_node, d.first_rounding->steps, Chain(*d.first_rounding));
  if (d.first_failure)
    out += fmt::format("    first failure at '{}' (kernel '{}'): {:.3g} steps\n{}", d.first_failure->tensor,
                       d.first_failure->fused_node, d.first_failure->steps, Chain(*d.first_failure));
  return out;
}

std::string FormatTop1(const std::vector<Top1Agreement>& top1) {
  std::string out;
  for (const auto& t : top1)
    out += fmt::format("top-1 agreement on '{}': {}/{} rows ({:.1f}%) over {} samples; {:.1f}% flipped\n", ConsoleName(t.output),
                       t.agree, t.rows, 100 * t.agreement(), t.samples, 100 * t.flipped());
  return out;
}

std::string FormatDetections(const std::vector<DetectionAgreement>& detections) {
  std::string out;
  for (const auto& d : detections)
    out += fmt::format(
        "detector output '{}' ({} classes along axis {}, {} anchors): per-anchor best class agrees on {}/{} ({:.2f}%) "
        "over {} samples; {} of {} detections (best score >= {:g}) kept, {} spurious; best score differs by at most "
        "{:.3g}\n",
        ConsoleName(d.output), d.layout.classes, d.layout.class_axis, d.layout.anchors, d.class_agree, d.anchors,
        100 * d.class_agreement(), d.samples, d.kept, d.detections, kDetectionScore, d.spurious, d.max_score_diff);
  return out;
}

// One line per output: the rule its verdict band came from.
std::string FormatOutputRules(const QuantReport& r) {
  std::string out;
  for (const auto& o : r.outputs) out += fmt::format("  output '{}' judged by rule {}: {}\n", ConsoleName(o.output), o.rule, o.why);
  return out;
}

std::string FormatQuantTable(const QuantReport& r, size_t max_rows) {
  if (r.deployed && r.layers.empty()) return FormatDeployed(*r.deployed) + FormatOutputRules(r);
  if (r.layers.empty() && !r.outputs.empty()) return FormatOutputRules(r);
  std::string out;
  out += fmt::format("  precision per layer ({}; rule: {}); {} of {} conv/matmul layers matched\n", r.kind, r.rule,
             r.compute_matched, r.compute_layers);
  out += fmt::format("    {:<36} {:<17} {:>8} {:>7} {:>9} {:>7} {:>9} {:>9}\n", "node", "op", "sqnr_dB", "steps",
             "local_dB", "l_steps", "inh_dB", "weight_dB");
  size_t shown = 0;
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const auto& l = r.layers[i];
    if (max_rows > 0 && shown == max_rows) {
      out += fmt::format("    ... {} more layers (--json for all)\n", r.layers.size() - shown);
      break;
    }
    ++shown;
    const std::string inh = std::isinf(l.inherited_sqnr_db) ? "exact" : fmt::format("{:.1f}", l.inherited_sqnr_db);
    out += fmt::format("    {:<36} {:<17} {:>8} {:>7} {:>9} {:>7} {:>9} {:>9}{}\n", Short(l.node, 36), l.op_type,
               Db(l.cumulative), Steps(l.cumulative, l.step), Db(l.local), Steps(l.local, l.step), inh,
               l.weight ? Db(l.weight->loss) : "-", r.worst_local && *r.worst_local == i ? "  <- worst local" : "");
  }
  // A clipping quantizer outranks the worst local loss: the reader's loss
  // is the producer's clipping, and keeping the reader in float leaves it.
  if (r.clipped) out += fmt::format("  clipping: {}\n", r.clipped->Describe());
  if (r.worst_local) {
    const auto& w = r.layers[*r.worst_local];
    const bool reads_clipped = r.clipped && std::find(r.clipped->readers.begin(), r.clipped->readers.end(), w.node) !=
                                                r.clipped->readers.end();
    out += fmt::format("  worst local loss: {} ({}{}) local SQNR {} dB, {} steps: {}\n", w.node, w.op_type,
                       w.module.empty() ? "" : ", module " + w.module, Db(w.local), Steps(w.local, w.step),
                       reads_clipped ? fmt::format("it reads the clipped output of '{}' (above)", r.clipped->node)
                                     : std::string("the layer to keep in float"));
  }
  if (r.overflow)
    out += fmt::format("  float16 overflow: first at {} ({}), tensor '{}': {}; keep '{}' in float (node_block_list)\n",
                       r.overflow->node, r.overflow->op_type, r.overflow->tensor, r.overflow->reason, r.overflow->node);
  for (const auto& u : r.unmatched) out += fmt::format("  unmatched: {} ({}): {}\n", u.node, u.op_type, u.reason);
  return out + FormatOutputRules(r);
}

}  // namespace parity
