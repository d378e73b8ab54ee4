// Verdicts in quantization steps for a QDQ model judged against itself at
// another config (issue 25, docs/quantized.md "At the deployed config"): the
// fused QLinearConv / QGemm / MatMulIntegerToFloat kernels that run at
// ORT_ENABLE_ALL against the unfused QuantizeLinear/DequantizeLinear path of
// ORT_DISABLE_ALL. Both sides round to the same integer grid; a kernel that
// resolves a rounding tie the other way differs by exactly one step. So the
// band of every quantized tensor is one step of its own scale:
//
//   a QuantizeLinear output (int8/uint8):      atol = steps (grid units), rtol 0;
//   its float input and DequantizeLinear output: atol = steps * scale, rtol 0.
//
// A difference within the band is "rounding" (counted, not a failure); more
// fails, and locate names the fused kernel where it first appears.
#pragma once

#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "engine/quant/quant_result.h"
#include "onnx/model.h"

namespace parity {

// One rule per quantized tensor of `m` (exact names; `why` says which scale).
// Empty when `m` has no QuantizeLinear with a constant scale.
std::vector<ToleranceRule> StepRules(const Model& m, double steps = 1);

// `policy` with `rules` put before its own rules (a user's rule for the same
// name still wins: later rules overlay earlier ones).
TolerancePolicy WithStepRules(const TolerancePolicy& policy, const std::vector<ToleranceRule>& rules);

// (The step verdicts of a locate report judged with these rules are summed
// up by engine/locate/locate_steps.h: locate includes this folder, never the
// reverse.)

}  // namespace parity
