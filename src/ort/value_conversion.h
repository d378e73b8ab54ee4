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

// The same Tensor without the copy: it wraps the value's buffer and owns
// `value`, and `keep_alive` (the session whose run made it: ORT may hand
// back a buffer the session owns, an initializer's or one planned for it),
// until its last copy goes. String tensors are copied as FromOrtValue does.
Result<Tensor> AdoptOrtValue(Ort::Value value, std::shared_ptr<const void> keep_alive);

}  // namespace parity::ort
