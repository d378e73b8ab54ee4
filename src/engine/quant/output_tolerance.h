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
//                     kOutputQuantile quantile (at most 5% of the elements
//                     may lie further: isolated step outliers, and values
//                     past the calibration range that saturate).
//   float16_roundoff  a float16 model's output: the band kFloat16Roundoffs x
//                     u x max|ref| with u = 2^-11, float16's unit roundoff
//                     (rtol 16u, decided by max), atol 2^-24 (float16's
//                     smallest subnormal).
//   quantized_default an output no constant scale reaches (dynamic
//                     quantization computes its scales at run time; a
//                     Softmax after the last DequantizeLinear): the quantized
//                     target's default (tolerance.h, 1e-1 x rms(ref)), decided
//                     by the kOutputQuantile quantile as qdq_steps.
//   user              the user gave --atol/--rtol: their band, nothing derived.
//
// Why 4 steps: the output's own rounding costs 0.5 step, the upstream
// layers' noise adds about one step rms (resnet18, random weights, 16
// samples: rms 0.9 steps, 0.006% of the logits beyond 4 steps); a weight
// scale 4x too coarse in the last layer puts 36% beyond 4 steps.
// Why 5% may lie further: a deeper healthy copy has isolated outliers
// (mobilenet_v3_small, random weights, 224x224, 64 samples: 0.6% to 3.6% of
// its 1000 logits beyond 4 steps, at most 9 steps, top-1 the same on every
// sample); a systematic fault moves far more (the coarse weight above: 36%).
//
// Never read from the model alone (issue 40): qdq_steps and float16_roundoff
// carry reference_fraction kReferenceFraction (tolerance.h): the band may not
// exceed 1/4 of the float reference's rms, on the whole output and, on an
// output that mixes scales (compare/slice_bands.h), on each slice of it. An
// output scale too coarse for part of the output (a detector's Concat of
// pixel boxes and class scores under one scale: every score quantizes to 0)
// then fails on that part, whatever steps it allows. A healthy output's 4
// steps are ~1/8 of its rms (a range of ~8 rms over 255 steps).
#pragma once

#include <vector>

#include "compare/tolerance.h"
#include "engine/quant/quant_result.h"
#include "onnx/model.h"

namespace parity {

inline constexpr double kOutputSteps = 4;
inline constexpr double kOutputQuantile = 0.95;
inline constexpr double kReferenceFraction = 0.25;
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
