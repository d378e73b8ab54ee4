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

// A TensorProto with raw_data (string_data for strings).
onnx::TensorProto TensorToProto(const std::string& name, const Tensor& tensor);

}  // namespace parity::onnx_adapter
