// Internal to src/onnx: TensorProto <-> Tensor conversion.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "core/status.h"
#include "core/tensor.h"

namespace parity::onnx_adapter {

// Converts an in-memory TensorProto (external data must already be inlined).
// Errors name the tensor, not a file; callers add the file as context.
Result<Tensor> TensorFromProto(const onnx::TensorProto& proto);

// Checks, without allocating, that every tensor of `graph` holds the data its
// dims declare: initializers, Constant nodes' tensors, and the same in every
// subgraph. A STRING tensor needs one string_data entry per element, a raw
// one dims x element size bytes, a typed one that many field entries.
// External tensors (their size is the external-data reader's) and element
// types parity does not know are left to ONNX Runtime. Issue 29: a 122-byte
// model declaring a STRING initializer of 2e8 elements with one entry made ORT
// allocate 6.3 GB before anything looked. Error (kInvalidArgument):
// "initializer 'x': 1 strings for shape [200000000]".
Status CheckTensorSizes(const onnx::GraphProto& graph);

// A TensorProto with raw_data (string_data for strings).
onnx::TensorProto TensorToProto(const std::string& name, const Tensor& tensor);

}  // namespace parity::onnx_adapter
