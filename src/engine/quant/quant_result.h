// What the per-layer precision analysis of a derived model found (issue 25,
// docs/quantized.md), as plain data: engine/quant/quant_layers.h fills it;
// report/quant_report.h writes it (the `quant` object of parity.locate/1 and
// parity.check/1). Header only, without ONNX or ORT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parity {

// One loss measurement of a tensor against its float value.
struct QuantLoss {
  bool measured = false;  // false: not measured (the note of the layer says why)
  double sqnr_db = 0;     // 10 log10(sum r^2 / sum d^2); +inf when identical
  double max_abs = 0;
  double max_steps = 0;   // max_abs in steps of the layer's grid (compare/judge.h MaxSteps)
  double ref_absmax = 0;  // max|float value| over its finite elements
  int64_t nonfinite = 0;  // NaN/Inf in the derived value where the float one is finite (or the reverse)
};

// The weight of a layer: the float initializer against the dequantized (or
// fp16) one the derived model computes with.
struct QuantWeight {
  std::string tensor;          // the float model's initializer
  std::string derived_tensor;  // the DequantizeLinear output (QDQ) or fp16 initializer
  double step = 0;             // its scale (largest per-channel scale) or fp16 spacing
  QuantLoss loss;
};

// One float node matched to the derived model.
struct QuantLayer {
  std::string node;     // the node's name (the same in both models)
  std::string op_type;
  std::string module;   // the module path from the node's name where it has one ("layer1.0.conv1")
  std::string tensor;   // the float tensor compared (the layer's output in the float model)
  std::string derived_tensor;  // what it is compared with: the DequantizeLinear / Cast output, or itself
  std::string grid;            // "int8" / "uint8" (QDQ scale), "float16", or "float" (not re-gridded)
  double step = 0;             // the grid's step (scale, or the fp16 spacing at max|ref|)
  std::vector<std::string> folded;  // float nodes the derived model folded into this layer (Relu into its Q)
  QuantLoss cumulative;  // the derived model run end to end
  QuantLoss local;       // the layer alone, fed the float model's values of its inputs
  double inherited_sqnr_db = 0;  // the worst cumulative SQNR among its inputs (+inf: all exact)
  std::vector<std::string> inputs;  // float tensors the local run is fed
  std::optional<QuantWeight> weight;
  bool compute = false;  // Conv, ConvTranspose, Gemm, MatMul (the layers "matched" counts)
  std::string note;
};

// A float node with no counterpart in the derived model, and why.
struct QuantUnmatched {
  std::string node;
  std::string op_type;
  std::string reason;
};

// float16: the first layer (topological order) whose float activations leave
// float16's range (max|x| > 65504) or whose float16 value is Inf/NaN.
struct QuantOverflow {
  std::string node;     // the node to keep in float (the converters' node_block_list)
  std::string op_type;
  std::string tensor;
  double float_absmax = 0;  // max|x| in the float model
  int64_t nonfinite = 0;    // Inf/NaN elements in the float16 model
  std::string reason;
};

// QDQ: the layer whose output quantizer clips the most (issue 50): its float
// values reach beyond what its grid represents (max|x| more than 1.2 x
// 127.5 steps of an int8 grid, 255 of a uint8 one), so every layer reading
// it inherits the clipping. The int8 advice names this producer, not the
// reader whose own loss is worst (keeping the reader in float leaves the
// clipping in place).
struct QuantClip {
  std::string node;
  std::string op_type;
  std::string tensor;
  std::string grid;             // "int8" / "uint8"
  double step = 0;              // the quantizer's scale
  double representable = 0;     // the largest |x| its grid holds: 127.5 or 255 steps
  double float_absmax = 0;      // max|x| the float model computes there
  std::vector<std::string> readers;  // matched layers that read the clipped tensor
  std::string Describe() const;      // one line: what clips, by how much, and what to keep in float
};

// A QDQ model at the deployed config against its unfused QDQ path, in steps
// (engine/quant/quant_steps.h).
// One kernel of a fused chain run alone (fed the reference values of its
// quantized inputs) under both configs: its own difference, in grid units.
struct QuantKernelSteps {
  std::string node;    // the original Conv / Gemm / MatMul
  std::string tensor;  // its QuantizeLinear output
  double steps = 0;
};

struct QuantStepTensor {
  std::string tensor;
  std::string fused_node;  // the optimized node that produces it (the kernel)
  double steps = 0;        // max difference in steps of its scale
  // When fused_node covers several kernels (the NhwcTransformer chain of
  // QLinearConvs): each kernel alone, and the first whose own difference
  // reaches this entry's band (rounding: > 0 steps; failure: > 1 step).
  std::vector<QuantKernelSteps> chain;
  std::string kernel;  // "" when no kernel alone shows it (the steps add up along the chain)
};

struct QuantDeployed {
  std::string rule;   // "1 quantization step of each tensor's scale"
  size_t judged = 0;  // tensors judged with a step band
  size_t exact = 0;
  size_t rounding = 0;  // 0 < difference <= 1 step: rounding ties, not failures
  size_t failed = 0;    // more than one step
  std::optional<QuantStepTensor> first_rounding;  // where the first step appears
  std::optional<QuantStepTensor> first_failure;   // where extra steps first appear
};

// The default verdict band of one output of a derived model against its
// float model (engine/quant/output_tolerance.h), and the rule that made it.
struct QuantOutputRule {
  std::string output;
  std::string rule;    // "qdq_steps", "float16_roundoff", "quantized_default" or "user"
  std::string source;  // qdq_steps: the DequantizeLinear output whose scale is used ("" otherwise)
  double scale = 0;    // qdq_steps: that scale (the coarsest channel)
  double atol = 0, rtol = 0;
  std::string decide_by;  // "quantile", "max", ... (tolerance.h StatisticName)
  double quantile = 0;    // for "quantile"
  double reference_fraction = 0;  // qdq_steps / float16_roundoff: the cap by the float reference (0: none)
  std::string why;        // one line: the rule in words
};

struct QuantReport {
  std::string kind;  // "qdq", "float16" or "float" (no quantization found)
  std::string rule;  // how steps and verdict bands were chosen (docs/quantized.md)
  std::vector<QuantLayer> layers;  // float model's topological order
  std::vector<QuantUnmatched> unmatched;
  std::optional<size_t> worst_local;  // index in layers: the lowest local SQNR
  std::optional<QuantOverflow> overflow;  // float16 only
  std::optional<QuantClip> clipped;       // QDQ only: the quantizer that clips the most
  std::optional<QuantDeployed> deployed;  // a QDQ model against itself at another config
  std::vector<QuantOutputRule> outputs;   // check: the rule of each output's verdict band
  size_t compute_layers = 0;          // Conv/Gemm/MatMul nodes of the float model
  size_t compute_matched = 0;         // of those, matched
  int sessions = 0;
  double wall_ms = 0;
};

}  // namespace parity
