// INTERNAL to src/ort/: parity Tensor <-> Ort::Value for every DType.
// Includes ORT headers; never include it outside src/ort/.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <optional>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity::ort {

ONNXTensorElementDataType ToOrtElementType(DType dtype);
// nullopt for element types parity does not handle (complex, float8, int4, ...).
std::optional<DType> FromOrtElementType(ONNXTensorElementDataType type);

// Wraps the tensor's bytes without copying: the returned value borrows
// `tensor`'s buffer, which must outlive it. String tensors are copied into an
// ORT-owned value (ORT keeps strings in its own layout).
Result<Ort::Value> ToOrtValue(const Tensor& tensor);

// Both may throw Ort::Exception; Session converts it at the adapter edge.

// Copies a CPU tensor value into a new parity Tensor. kUnsupported for a
// sequence, map or optional value, or an element type parity lacks.
Result<Tensor> FromOrtValue(const Ort::Value& value);

}  // namespace parity::ort
