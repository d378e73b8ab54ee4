#include "engine/quant/output_tolerance.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "compare/judge.h"
#include "engine/quant/layer_match.h"
#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {

namespace {

// Ops whose output values are a subset of their first input's (moved,
// reshaped, the larger of some, clipped at zero): still on its grid.
bool KeepsGrid(std::string_view op) {
  static constexpr std::array<std::string_view, 12> kOps = {"Reshape", "Flatten", "Transpose", "Squeeze",
                                                            "Unsqueeze", "Identity", "Relu", "MaxPool",
                                                            "Slice", "Gather", "Expand", "Split"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

double CoarsestScale(const Model& m, const std::string& name) {
  auto t = ReadInitializer(m, name);
  if (!t) return 0;
  double s = 0;
  for (int64_t i = 0; i < t->size(); ++i) s = std::max(s, std::fabs(t->GetAsDouble(i)));
  return s;
}

// The QDQ rule of `output`: its own DequantizeLinear's scale, or the last
// one before it through grid-keeping ops; `why` says what was found when
// there is none.
QuantOutputRule QdqRule(const Model& m, const GraphView& g, const std::string& output) {
  QuantOutputRule r{.output = output};
  std::string tensor = output;
  std::vector<std::string> through;
  for (int hops = 0; hops < 64; ++hops) {
    const GraphNode* n = g.Producer(tensor);
    if (n == nullptr) break;
    if (n->op_type == "DequantizeLinear" && n->inputs.size() >= 2) {
      r.scale = CoarsestScale(m, n->inputs[1]);
      if (!(r.scale > 0)) break;
      r.rule = "qdq_steps";
      r.source = tensor;
      const Tolerance t = StepTolerance(r.scale, kOutputSteps);
      r.atol = t.atol;
      r.rtol = t.rtol;
      r.decide_by = std::string(StatisticName(Statistic::kQuantile));
      r.quantile = kOutputQuantile;
      r.reference_fraction = kReferenceFraction;
      const std::string where =
          through.empty() ? "its own DequantizeLinear"
                          : fmt::format("the last DequantizeLinear before it, '{}', through {}", tensor,
                                        fmt::join(through, ", "));
      r.why = fmt::format("{:g} quantization steps of scale {:.4g} ({}): atol {:.4g}, rtol 0, at least {:g}% of the "
                          "elements within; at most {:g} x the float reference's rms (per slice where it mixes "
                          "scales)",
                          kOutputSteps, r.scale, where, r.atol, 100 * kOutputQuantile, kReferenceFraction);
      return r;
    }
    if (!KeepsGrid(n->op_type) || n->inputs.empty()) {
      r.why = fmt::format("no constant quantization scale reaches '{}' (its value comes from {} '{}'{})", output,
                          n->op_type, n->name,
                          n->op_type == "MatMulIntegerToFloat" || n->op_type == "DynamicQuantizeLinear" ||
                                  n->op_type == "MatMulInteger"
                              ? ", whose scales dynamic quantization computes at run time"
                              : ", not on a DequantizeLinear's grid");
      break;
    }
    through.push_back(n->op_type);
    tensor = n->inputs[0];
  }
  if (r.why.empty()) r.why = fmt::format("no constant quantization scale reaches '{}'", output);
  r.rule = "quantized_default";
  return r;
}

QuantOutputRule Float16Rule(const std::string& output) {
  const double rtol = kFloat16Roundoffs * kFloat16UnitRoundoff;
  return {.output = output,
          .rule = "float16_roundoff",
          .atol = 0x1p-24,
          .rtol = rtol,
          .decide_by = std::string(StatisticName(Statistic::kMax)),
          .reference_fraction = kReferenceFraction,
          .why = fmt::format("{:g} unit roundoffs of float16 (2^-11) x max|ref|: max_abs <= {:.4g} x max|ref| "
                             "(+ 2^-24, float16's smallest subnormal); at most {:g} x the float reference's rms (per "
                             "slice where it mixes scales)",
                             kFloat16Roundoffs, rtol, kReferenceFraction)};
}

}  // namespace

std::vector<QuantOutputRule> DeriveOutputRules(const Model& float_model, const Model& derived,
                                               const TolerancePolicy& policy) {
  std::vector<QuantOutputRule> rules;
  auto fv = BuildGraphView(float_model, {.infer_shapes = false});
  auto dv = BuildGraphView(derived, {.infer_shapes = true});
  if (!fv || !dv) return rules;
  const std::string kind = MatchLayers(*fv, *dv).kind;
  if (kind == "float") return rules;
  const bool user = policy.global.atol.has_value() || policy.global.rtol.has_value();
  for (const auto& out : dv->outputs) {
    if (user) {
      rules.push_back({.output = out, .rule = "user", .why = "the band given with --atol/--rtol (nothing derived)"});
      continue;
    }
    rules.push_back(kind == "qdq" ? QdqRule(derived, *dv, out) : Float16Rule(out));
    if (rules.back().rule == "quantized_default") {
      const Tolerance t = DefaultTolerance(DType::kFloat32, true);
      rules.back().decide_by = std::string(StatisticName(Statistic::kQuantile));
      rules.back().quantile = kOutputQuantile;
      rules.back().why += fmt::format(": the quantized target's default, atol {:g} x rms(ref), rtol {:g}, at least "
                                      "{:g}% of the elements within",
                                      ScaledAtolFactor(DType::kFloat32, true), t.rtol, 100 * kOutputQuantile);
    }
  }
  return rules;
}

TolerancePolicy WithOutputRules(const TolerancePolicy& policy, const std::vector<QuantOutputRule>& rules) {
  TolerancePolicy p = policy;
  p.rules.clear();
  for (const auto& r : rules) {
    if (r.rule == "quantized_default") {
      // The band stays the scaled mode's (no atol here); isolated outliers as for qdq_steps.
      p.quantized = true;
      p.rules.push_back({.pattern = r.output, .quantile = r.quantile, .decide_by = Statistic::kQuantile,
                         .why = r.rule + ": " + r.why});
      continue;
    }
    if (r.rule != "qdq_steps" && r.rule != "float16_roundoff") continue;
    ToleranceRule t{.pattern = r.output, .atol = r.atol, .rtol = r.rtol, .mode = ToleranceMode::kFixed,
                    .why = r.rule + ": " + r.why};
    if (r.reference_fraction > 0) t.reference_fraction = r.reference_fraction;
    if (r.rule == "qdq_steps") {
      t.decide_by = Statistic::kQuantile;
      t.quantile = r.quantile;
    } else {
      t.decide_by = Statistic::kMax;
    }
    p.rules.push_back(std::move(t));
  }
  p.rules.insert(p.rules.end(), policy.rules.begin(), policy.rules.end());
  return p;
}

}  // namespace parity
