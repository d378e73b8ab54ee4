#include "engine/quant/quant_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {

namespace {

// The coarsest element of a constant scale; 0 when it is not an initializer.
double ConstantScale(const Model& m, const std::string& name) {
  auto t = ReadInitializer(m, name);
  if (!t) return 0;
  double s = 0;
  for (int64_t i = 0; i < t->size(); ++i) s = std::max(s, std::fabs(t->GetAsDouble(i)));
  return s;
}

ToleranceRule Band(const std::string& name, double atol, std::string why) {
  return {.pattern = name, .atol = atol, .rtol = 0.0, .decide_by = Statistic::kElementwise,
          .mode = ToleranceMode::kFixed, .why = std::move(why)};
}

}  // namespace

std::vector<ToleranceRule> StepRules(const Model& m, double steps) {
  std::vector<ToleranceRule> rules;
  auto view = BuildGraphView(m, {.infer_shapes = false});
  if (!view) return rules;
  std::unordered_set<std::string> seen;
  const std::string unit = steps == 1 ? "1 quantization step" : fmt::format("{:g} quantization steps", steps);
  for (const auto& n : view->nodes) {
    if (n.op_type != "QuantizeLinear" || n.inputs.size() < 2 || n.outputs.empty()) continue;
    const double scale = ConstantScale(m, n.inputs[1]);
    if (!(scale > 0)) continue;
    const std::string why = fmt::format("{} of scale {:.4g}", unit, scale);
    if (seen.insert(n.outputs[0]).second) rules.push_back(Band(n.outputs[0], steps, why + ", in grid units"));
    if (seen.insert(n.inputs[0]).second) rules.push_back(Band(n.inputs[0], steps * scale, why));
    auto dq = view->consumers.find(n.outputs[0]);
    if (dq == view->consumers.end()) continue;
    for (size_t c : dq->second) {
      const GraphNode& d = view->nodes[c];
      if (d.op_type == "DequantizeLinear" && !d.outputs.empty() && seen.insert(d.outputs[0]).second)
        rules.push_back(Band(d.outputs[0], steps * scale, why));
    }
  }
  return rules;
}

TolerancePolicy WithStepRules(const TolerancePolicy& policy, const std::vector<ToleranceRule>& rules) {
  TolerancePolicy p = policy;
  p.rules = rules;
  p.rules.insert(p.rules.end(), policy.rules.begin(), policy.rules.end());
  return p;
}

}  // namespace parity
