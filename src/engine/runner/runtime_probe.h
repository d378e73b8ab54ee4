// What the process's ONNX Runtime says of a model before any of its samples
// runs: an opset newer than it knows (`parity inspect`, issue 54).
#pragma once

#include <optional>

#include "onnx/inspect.h"
#include "onnx/validate.h"

namespace parity {

// A finding when the model's default-domain opset is newer than the ONNX
// Runtime that runs: ORT is asked for a session of a one-node model of that
// opset (through a Runner), and its refusal names its highest (ort_error.cc
// OpsetTooNewMessage). Nothing when ORT takes it, or when the probe cannot
// be built.
std::optional<Finding> OpsetBeyondRuntime(const ModelInfo& info);

}  // namespace parity
