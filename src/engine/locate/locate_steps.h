// The step verdicts of a locate report whose QDQ tensors were judged in
// quantization steps (engine/quant/quant_steps.h): the deployed config's
// fused kernels against the unfused QDQ path (docs/quantized.md).
#pragma once

#include <vector>

#include "compare/tolerance.h"
#include "engine/locate/locate_result.h"

namespace parity {

// Counts the judged tensors of `report` that `rules` (StepRules, one step
// each) name: exact, rounding (0 < difference <= 1 step), failed (more), and
// the first of each kind in the reference's topological order.
QuantDeployed SummarizeSteps(const LocateReport& report, const std::vector<ToleranceRule>& rules);

}  // namespace parity
