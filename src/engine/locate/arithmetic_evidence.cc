// The evidence locate gathers before naming a target's arithmetic
// (engine/run/arithmetic.h): whether the target is a derived model, whether
// the reference re-run with bf16 or fp16 rounding emulated reproduces the
// target's error tensor by tensor, and whether the error starts at one node.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "compare/metrics.h"
#include "engine/locate/locate_internal.h"
#include "engine/run/environment.h"
#include "engine/runner/runner.h"
#include "onnx/edit.h"

namespace parity::locate_internal {
namespace {

// Errors at or below this normwise relative error are float32's own
// (reordered accumulation, fused kernels): they say nothing of a format.
constexpr double kFloat32Level = 0x1p-17;
// Two errors reproduce each other within this factor.
constexpr double kWithin = 8;

double RelativeError(double snr_db) {
  if (std::isnan(snr_db)) return 1;  // not comparable: as far off as it gets
  if (std::isinf(snr_db)) return snr_db > 0 ? 0 : 1;
  return std::pow(10.0, -snr_db / 20.0);
}

// The rows the target's trace measured, in topological order.
std::vector<const LocateTensor*> Measured(const LocateReport& r) {
  std::vector<const LocateTensor*> rows;
  for (const auto& t : r.tensors)
    if (t.metrics && t.status != Verdict::kUnchecked) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->index < b->index; });
  return rows;
}

// The reference re-run with `format`'s rounding emulated, against the
// reference's own trace, tensor by tensor, beside the target's errors.
Result<EmulationEvidence> Emulate(const Context& ctx, DType format, const std::vector<const LocateTensor*>& rows) {
  std::vector<std::string> names;
  for (const LocateTensor* t : rows)
    if (ctx.reference_values.Find(t->name) != nullptr) names.push_back(t->name);
  PARITY_ASSIGN_OR_RETURN(Model rounded, WithFloatsRounded(ctx.reference_model, format));
  const std::string label = fmt::format("{} ({} emulated)", ctx.options.model_label, DTypeName(format));
  PARITY_ASSIGN_OR_RETURN(TensorSet values,
                          MakeSessionRunner(ctx.options.reference)
                              ->Run({.model = label, .loaded = &rounded, .names = names, .sample = ctx.sample.name},
                                    ctx.sample.tensors));
  EmulationEvidence e{.format = format == DType::kBFloat16 ? "bf16" : "fp16"};
  std::vector<double> ratios;
  for (const LocateTensor* t : rows) {
    const Tensor* ref = ctx.reference_values.Find(t->name);
    const Tensor* emulated = values.Find(t->name);
    if (ref == nullptr || emulated == nullptr || ref->size() != emulated->size()) continue;
    auto m = ComputeMetrics(*ref, *emulated, {});
    if (!m) continue;
    const double target = std::max(RelativeError(t->metrics->snr_db), kFloat32Level);
    const double emulation = std::max(RelativeError(m->snr_db), kFloat32Level);
    if (target == kFloat32Level && emulation == kFloat32Level) continue;  // nothing to tell them apart
    ++e.compared;
    ratios.push_back(target / emulation);
    e.reproduced += target / emulation <= kWithin && emulation / target <= kWithin;
  }
  if (!ratios.empty()) {
    std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
    e.median_ratio = ratios[ratios.size() / 2];
  }
  ctx.report.sessions_created += 1;
  return e;
}

// Where the error starts: the first measured tensor
// past float32's level (every tensor before it agrees), at or before the
// first divergence; null without a divergence.
const LocateTensor* LocalStart(const LocateReport& r, const std::vector<const LocateTensor*>& rows) {
  if (!r.first_divergence) return nullptr;
  for (const LocateTensor* t : rows)
    if (RelativeError(t->metrics->snr_db) > kFloat32Level || t->name == r.first_divergence->tensor) return t;
  return nullptr;
}

}  // namespace

ArithmeticEvidence GatherArithmeticEvidence(Context& ctx) {
  const LocateReport& r = ctx.report;
  ArithmeticEvidence e;
  if (!r.culprits.empty()) {
    e.snr_db = r.culprits.front().local.snr_db;
  } else if (r.first_divergence) {
    for (const auto& t : r.tensors)
      if (t.name == r.first_divergence->tensor && t.metrics) e.snr_db = t.metrics->snr_db;
  }
  if (r.quant && r.quant->kind != "float") {
    e.derived = r.quant->kind == "float16" ? "fp16" : "int8";
    return e;
  }
  const auto rows = Measured(r);
  if (const LocateTensor* start = LocalStart(r, rows)) {
    e.local_node = start->producer;
    if (start->fused_node != start->producer) e.local_fused_node = start->fused_node;
  }
  // Another float model than the reference: the models differ, whatever
  // an emulation would reproduce (arithmetic.h).
  if (&ctx.target_model != &ctx.reference_model) {
    e.model_differs = true;
    return e;
  }
  // The config's own word needs no emulation (arithmetic.h).
  if (DiagnoseArithmetic({.snr_db = e.snr_db}, r.target, CurrentEnvironment())) return e;
  for (DType format : {DType::kBFloat16, DType::kFloat16}) {
    // A format the config cannot compute in is never emulated (nor named).
    if (!ConfigCanCompute(format == DType::kBFloat16 ? "bf16" : "fp16", r.target)) continue;
    auto emulated = Emulate(ctx, format, rows);
    if (!emulated) {
      ctx.report.notes.push_back(fmt::format("the {} emulation could not run: {}", DTypeName(format),
                                             emulated.error().message()));
      continue;
    }
    if (!e.emulation || emulated->reproduced * e.emulation->compared > e.emulation->reproduced * emulated->compared)
      e.emulation = *emulated;
    if (e.emulation->Reproduces()) break;
  }
  return e;
}

}  // namespace parity::locate_internal
