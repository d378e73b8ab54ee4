#include "engine/locate/locate_steps.h"

#include <cmath>
#include <limits>
#include <unordered_map>

namespace parity {

QuantDeployed SummarizeSteps(const LocateReport& report, const std::vector<ToleranceRule>& rules) {
  QuantDeployed d{.rule = "1 quantization step of each tensor's scale (a QuantizeLinear output: 1 grid unit); "
                          "a difference of at most one step is rounding"};
  std::unordered_map<std::string, double> step;
  for (const auto& r : rules)
    if (r.atol) step.emplace(r.pattern, *r.atol);
  for (const auto& t : report.tensors) {
    auto it = step.find(t.name);
    if (it == step.end() || !t.metrics || it->second <= 0) continue;
    ++d.judged;
    const TensorMetrics& m = *t.metrics;
    const double steps = m.nan_mismatch + m.inf_mismatch > 0 ? std::numeric_limits<double>::infinity()
                                                             : m.max_abs / it->second;
    const QuantStepTensor row{.tensor = t.name, .fused_node = t.fused_node, .steps = steps};
    if (steps == 0) {
      ++d.exact;
    } else if (steps <= 1) {
      ++d.rounding;
      if (!d.first_rounding) d.first_rounding = row;
    } else {
      ++d.failed;
      if (!d.first_failure) d.first_failure = row;
    }
  }
  return d;
}

}  // namespace parity
