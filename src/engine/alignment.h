// Aligning a PyTorch dump with an ONNX model: for each dumped module output,
// the ONNX tensor that holds the same value (SPEC.md "Reports", `alignment`).
//
// 1. By name scope. The TorchScript exporter names nodes after the module
//    path (python/ALIGNMENT_NOTES.md): module `features.1.block.2.0` owns the
//    nodes named `/features/features.1/block/block.2/block.2.0/...`, call k>0
//    of a module adds `_k` to the last component. The module's output is the
//    last tensor its scope's nodes produce that is used outside the scope or
//    is a graph output (whose name is the user's output name, so the node's
//    real output name is taken, never `<node>_output_0` built by string).
// 2. Verified by value: the candidate must agree with the dump (same shape,
//    within the tolerance policy). When it does not but equals a later
//    module's dump (a BatchNorm folded into the Conv before it), the module is
//    reported as folded (`none`) and the later one is aligned to it by value.
// 3. By value, where names fail: among the ONNX tensors of the dump's shape,
//    nearest first to where the previous layer was aligned (topological
//    order, forward before backward), the first that agrees (`value`).
// 4. Otherwise `none`, with the reason: folded, no node in its scope
//    (inlined, constant-folded, a no-op such as Dropout in eval), shape
//    mismatch. A name candidate whose values disagree with nothing better
//    found stays aligned by name: that is a divergence, judged later by
//    torch_compare.h, not an alignment failure.
//
// Dynamo exports (scopes in node metadata_props) are aligned by value only.
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
#include "engine/torch_dump.h"
#include "onnx/model.h"

namespace parity {

enum class AlignHow { kName, kValue, kNone };
std::string_view AlignHowName(AlignHow how);  // "name", "value", "none"

struct LayerAlignment {
  size_t layer = 0;  // index in TorchDump::layers
  std::string module;
  std::string file;
  std::string type;  // the module's class
  int64_t call = 0;
  std::optional<int64_t> output_index;
  bool leaf = true;
  std::string scope;    // the name scope looked for: "/layer1/layer1.0/relu_1"
  std::string tensor;   // the ONNX tensor; empty when none
  std::string node;     // its producer node; empty when none
  std::string op_type;  // the producer's op type
  AlignHow how = AlignHow::kNone;
  std::string reason;         // why `none`, or how a `value` match was found
  bool values_agree = false;  // the tensor agreed with the dump within tolerance
};

struct AlignOptions {
  // Decides when a tensor "agrees" with a dump (resolved per module path).
  TolerancePolicy policy;
  // How far (in topological positions) the value search looks on each side
  // of the expected position.
  int search_window = 256;
};

// The name scope of call `call` of module `module_path` (see above):
// "features.1.block.2.0" -> "/features/features.1/block/block.2/block.2.0".
// Modules that were never called (a ModuleList has no forward) add no
// component: with `called` = the dump's modules, "encoder.layers.0.self_attn"
// -> "/encoder/layers.0/self_attn". Null `called`: every prefix counts.
std::string TorchScopeName(std::string_view module_path, int64_t call,
                           const std::unordered_set<std::string>* called = nullptr);

// Aligns every layer of `dump` with the tensors of `onnx_model`.
// `onnx_values` holds the model's intermediate tensors (node outputs, graph
// outputs included) computed from the dump's inputs; tensors missing from it
// can only be aligned by name, unverified. Layer tensors are read one at a
// time. Returns one entry per dump layer, in the dump's order. Errors: the
// model's graph is invalid, a layer file cannot be read.
Result<std::vector<LayerAlignment>> Align(const TorchDump& dump, const Model& onnx_model,
                                          const TensorSet& onnx_values, const AlignOptions& options);

// Whether `test` agrees with `ref` under `policy` (resolved for `name`):
// same shape, and the policy's decision passes. Never fails.
bool ValuesAgree(std::string_view name, const Tensor& ref, const Tensor& test, const TolerancePolicy& policy);

}  // namespace parity
