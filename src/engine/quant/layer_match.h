// Matching the layers of a float model to a model derived from it by a
// quantizer or a float16 converter (issue 25, docs/quantized.md), by the
// names those tools keep:
//
// - onnxruntime.quantization (QDQ, static or dynamic): every node keeps its
//   name; a float tensor X it quantizes gets X -> QuantizeLinear ->
//   DequantizeLinear -> X_DequantizeLinear_Output, and a weight W becomes
//   W_quantized -> DequantizeLinear. A Relu/Clip after a Conv is folded into
//   the Conv's QuantizeLinear: the Conv then writes the Relu's output name.
// - onnxruntime.transformers.float16 / onnxconverter-common: every node keeps
//   its name and tensors keep theirs (float16 now); keep_io_types adds Casts
//   at the graph's edges (graph_input_cast_0 -> ..., ... -> graph_output_cast_0
//   -> Cast -> the output's name).
//
// - onnxruntime.quantization.quantize_dynamic (QOperator): a MatMul N becomes
//   DynamicQuantizeLinear(X) -> MatMulInteger "N_quant"(X_q, W_quantized) ->
//   Cast -> Mul by the scales, which writes N's output name again; the layer
//   is compared on that name, its weight is W_quantized dequantized with
//   W_scale / W_zero_point, and its grid "dynamic" (its activation scales
//   are computed at run time: no steps).
//
// A float node N matches the derived node of the same name and op type. Its
// compared tensor is the derived node's output followed through a
// QuantizeLinear -> DequantizeLinear pair or an inserted Cast, and named in
// the float model by the first name on that path the float model has. The
// layer's local inputs are its derived inputs followed back through inserted
// DequantizeLinear / QuantizeLinear / Cast nodes to a tensor of the float
// model; an initializer found that way is the layer's weight.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/quant/quant_result.h"
#include "onnx/graph.h"

namespace parity {

struct LayerPlan {
  QuantLayer layer;          // node, op_type, module, tensor, derived_tensor, folded, inputs, compute filled
  std::string scale;         // the derived model's scale initializer of the compared tensor ("": not QDQ)
  std::string zero_point;    // its zero point initializer ("" when absent: uint8)
  struct Weight {
    std::string float_tensor;    // the float model's initializer
    std::string derived_tensor;  // a DequantizeLinear output, or an initializer of the derived model
    bool derived_is_initializer = false;
    std::string scale;           // the DequantizeLinear's scale ("" for fp16)
    // Dynamic quantization: derived_tensor is the int8 codes, dequantized
    // with `scale` and this zero point (initializers) before comparing.
    std::string zero_point;
    bool codes = false;
  };
  std::optional<Weight> weight;
};

struct LayerMatch {
  std::string kind;  // "qdq" (QuantizeLinear/DequantizeLinear found), "float16" (Casts or fp16 tensors), "float"
  std::vector<LayerPlan> layers;  // float topological order
  std::vector<QuantUnmatched> unmatched;
  size_t compute_layers = 0;
  size_t compute_matched = 0;
};

// Whether `op_type` is a layer whose weights carry the model (Conv, ConvTranspose, Gemm, MatMul).
bool IsComputeOp(const std::string& op_type);

// The module path a TorchScript export's node name records,
// "/layer1/layer1.0/conv1/Conv" -> "layer1.0.conv1"; "" for a root-level or
// unscoped name.
std::string ModuleFromNodeName(const std::string& node_name);

// Matches the layers (above). Never fails: what cannot be matched is listed
// in `unmatched` with the reason. `float_view` and `derived_view` are the two
// models' graphs (types are used when present: a derived tensor of type
// float16 makes the kind "float16").
LayerMatch MatchLayers(const GraphView& float_view, const GraphView& derived_view);

}  // namespace parity
