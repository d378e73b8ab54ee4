// Internal to src/onnx: TypeProto -> TensorType.
#pragma once

#include <onnx/onnx_pb.h>

#include "onnx/tensor_type.h"

namespace parity::onnx_adapter {

TensorType TensorTypeFromProto(const onnx::TypeProto& type);

}  // namespace parity::onnx_adapter
