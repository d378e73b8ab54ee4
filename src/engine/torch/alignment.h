// Aligning a PyTorch dump with an ONNX model: for each dumped module output,
// the ONNX tensor that holds the same value (docs/align.md).
//
// Structure first (engine/torch/torch_scope.h): a module call owns the nodes the
// exporter recorded under it (dynamo: node metadata, `scope`; TorchScript:
// node names, `name`). Its output is the last tensor of the dump's shape that
// those nodes produce and something outside them reads (or a graph output);
// a tuple's element by its output index. A structural match is kept whatever
// the values say: a disagreement there is a divergence at that module.
//
// Known export transformations, by structure:
// - eval BatchNorm folded into the Conv before it: the Conv's own output does
//   not exist (`none`, "folded"), the BatchNorm (torchvision's BatchNorm2d,
//   timm's BatchNormAct2d) holds the fused node; in dynamo exports that node
//   carries the BatchNorm's scope, in TorchScript ones the Conv's name.
// - modules without nodes (Dropout, Identity in eval): their output is their
//   input, the tensor of the layer before; kept when the values agree.
// - a module called several times: TorchScript numbers the calls ("relu_1");
//   dynamo does not, so its calls are told apart by position (runs of the
//   module's nodes in topological order); when they cannot be, the module's
//   own nodes are searched by value.
// - a tuple element: the k-th escaping tensor of its shape when as many leave
//   the call as it returned elements of that shape; otherwise (an element the
//   caller never used, which the export dropped) not by shape alone: by value
//   among them, else `none` ("not used outside the module").
// Value is the fallback where structure places nothing: among the tensors of
// the dump's shape, nearest first to the previous aligned position, the first
// that agrees (`value`). Otherwise `none`, with the reason; when tensors of
// its shape were there and none agreed, the layer is `refused`: a divergence
// could hide in it, and torch_compare.h says so in its verdict.
//
// Module paths: a dump made through a wrapper module reads
// `model.model.4.m.1` where the export's scopes read `model.4.m.1` (or the
// other way round); module_paths.h infers the prefix from the best structural
// match, and every lookup goes through it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "compare/tolerance.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/torch/module_paths.h"
#include "engine/torch/torch_dump.h"
#include "onnx/model.h"

namespace parity {

enum class AlignHow {
  kScope,  // dynamo export: the node scopes in metadata_props
  kName,   // TorchScript export: the scope in node names
  kValue,  // structure placed nothing: found by value
  kNone,
};
std::string_view AlignHowName(AlignHow how);  // "scope", "name", "value", "none"
// kScope or kName.
inline bool ByStructure(AlignHow how) { return how == AlignHow::kScope || how == AlignHow::kName; }

// A tensor a structurally aligned module call reads from outside its own
// nodes, and which module's node computes it.
struct EnteringTensor {
  std::string tensor;
  std::string node;     // its producer; "" for a graph input
  std::string op_type;
  std::string module;   // the producer's innermost module; "" at the root
  int64_t call = 0;
};

struct LayerAlignment {
  size_t layer = 0;  // index in TorchDump::layers
  std::string module;
  std::string file;
  std::string type;  // the module's class
  int64_t call = 0;
  std::optional<int64_t> output_index;
  bool leaf = true;
  std::string scope;    // the scope looked for: "layer1.0.relu" (call 1)
  std::string tensor;   // the ONNX tensor; empty when none
  std::string node;     // its producer node; empty when none
  std::string op_type;  // the producer's op type
  AlignHow how = AlignHow::kNone;
  std::string reason;         // why `none`, or how a `value` match was found
  bool values_agree = false;  // the tensor agreed with the dump within tolerance
  // The module's output was folded into a neighbour's node (a Conv before an
  // eval BatchNorm): not a failure to align.
  bool folded = false;
  // Structural alignments: what the call's nodes read from outside them, in
  // the order first read (initializers and Constant nodes left out).
  std::vector<EnteringTensor> entering;
  // Whose recorded inputs `entering` stands for: this layer's, or the folded
  // Conv's whose node this BatchNorm holds (dynamo scopes the fused node under
  // the BatchNorm; it reads the Conv's input, not the BatchNorm's).
  std::optional<size_t> entering_of;
  // Unaligned, though it should have an ONNX tensor: its call owns nodes, or
  // tensors of its shape lie where it ran. Named in the report.
  bool expected = false;
  // Value alignment found tensors of its shape where it looked and none
  // agreed: a divergence could hide here. `nearest` is the first it tried.
  bool refused = false;
  std::string nearest;
};

// Every layer's alignment, and how the dump's module paths were read
// against the export's scopes.
struct Alignment {
  std::vector<LayerAlignment> layers;  // one per dump layer, in the dump's order
  ModulePathMap paths;
};

struct AlignOptions {
  // Decides when a tensor "agrees" with a dump (resolved per module path).
  TolerancePolicy policy;
  // How far (in topological positions) the value search looks on each side
  // of the expected position.
  int search_window = 256;
};

// Aligns every layer of `dump` with the tensors of `onnx_model`.
// `onnx_values` holds the model's intermediate tensors (node outputs, graph
// outputs included) computed from the dump's inputs; tensors missing from it
// can only be aligned by name, unverified. Layer tensors are read one at a
// time. Returns one entry per dump layer, in the dump's order, and the module
// path map it aligned under. Errors: the model's graph is invalid, a layer
// file cannot be read.
Result<Alignment> Align(const TorchDump& dump, const Model& onnx_model, const TensorSet& onnx_values,
                        const AlignOptions& options);

// Whether `test` agrees with `ref` under `policy` (resolved for `name`):
// same shape, and the policy's decision passes. Never fails.
bool ValuesAgree(std::string_view name, const Tensor& ref, const Tensor& test, const TolerancePolicy& policy);

}  // namespace parity
