// Verdict bands for the outputs of a derived model (int8 QDQ, float16)
// judged against the float model it was derived from (issue 25 item 4,
// docs/quantized.md "Verdicts"): derived from the quantization parameters,
// not a blanket 1e-1.
//
//   qdq_steps         an output on a QuantizeLinear/DequantizeLinear grid
//                     (its own DequantizeLinear, or the last one before it
//                     through ops that keep values on the grid: Reshape,
//                     Flatten, Transpose, Relu, MaxPool, ...): atol =
//                     kOutputSteps x that scale, rtol 0, decided by the
//                     kOutputQuantile quantile (at most 0.1% of the elements
//                     may lie further: a value past the calibration range
//                     saturates).
//   float16_roundoff  a float16 model's output: the band kFloat16Roundoffs x
//                     u x max|ref| with u = 2^-11, float16's unit roundoff
//                     (rtol 16u, decided by max), atol 2^-24 (float16's
//                     smallest subnormal).
//   quantized_default an output no constant scale reaches (dynamic
//                     quantization computes its scales at run time; a
//                     Softmax after the last DequantizeLinear): the quantized
//                     target's default (tolerance.h, 1e-1).
//   user              the user gave --atol/--rtol: their band, nothing derived.
//
// Why 4 steps: the output's own rounding costs 0.5 step, the upstream
// layers' noise adds about one step rms (resnet18, random weights, 16
// samples: rms 0.9 steps, 0.006% of the logits beyond 4 steps); a weight
// scale 4x too coarse in the last layer puts 36% beyond 4 steps.
#pragma once

#include <vector>

#include "compare/tolerance.h"
#include "engine/quant/quant_result.h"
#include "onnx/model.h"

namespace parity {

inline constexpr double kOutputSteps = 4;
inline constexpr double kOutputQuantile = 0.999;
inline constexpr double kFloat16Roundoffs = 16;
inline constexpr double kFloat16UnitRoundoff = 0x1p-11;

// One rule per graph output of `derived` when it is derived from
// `float_model` (layer_match.h's kind is not "float"); empty otherwise.
// `policy` is the user's: a global atol/rtol makes every rule "user".
std::vector<QuantOutputRule> DeriveOutputRules(const Model& float_model, const Model& derived,
                                               const TolerancePolicy& policy);

// `policy` with the derived bands as exact-name rules put before the user's
// own (a user's --tolerance NAME:... still wins), and `quantized` set when
// an output fell back to the quantized default.
TolerancePolicy WithOutputRules(const TolerancePolicy& policy, const std::vector<QuantOutputRule>& rules);

}  // namespace parity
