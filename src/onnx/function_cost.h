// The size of a model once its local functions are inlined, estimated
// without inlining (internal to src/onnx). ONNX's shape inference and ORT
// both expand every call of a model-local function; a 1.7 KB model whose
// functions each call the next twice asks them for 2^22 nodes and more.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>

#include "core/status.h"

namespace parity::onnx_adapter {

inline constexpr int kMaxFunctionDepth = 512;
// Nodes of the graph once its local functions are inlined, at most (a model
// above it is refused at load, docs/security.md "Limits"): ONNX's shape
// inference and ORT expand them, exponentially in a model whose functions
// call the next twice.
inline constexpr int64_t kMaxExpandedNodes = 1'000'000;

// Nodes of the main graph once every call of a local function (by domain,
// name and overload) is replaced by the function's body, recursively,
// subgraphs (If, Loop, Scan bodies) included. Each function is costed once
// (memoized), so the estimate takes time linear in the model's size; the
// count saturates at INT64_MAX. A function that calls itself, directly or
// not, or calls nested deeper than kMaxFunctionDepth: kInvalidArgument
// naming the function.
Result<int64_t> ExpandedNodeCount(const onnx::ModelProto& model);

}  // namespace parity::onnx_adapter
