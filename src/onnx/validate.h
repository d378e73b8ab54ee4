// Static validation of a model with the bundled ONNX (1.12): the checker and
// shape inference. Findings are collected, never thrown; Check never fails.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "onnx/model.h"

namespace parity {

enum class Severity { kError, kWarning, kInfo };
std::string_view SeverityName(Severity s);  // "error", "warning", "info"

struct Finding {
  Severity severity = Severity::kInfo;
  std::string stage;  // "checker" or "shape_inference"
  std::string message;
};

// The newest IR version and default-domain opset the bundled checker knows.
inline constexpr int64_t kCheckerMaxIrVersion = 8;
inline constexpr int64_t kCheckerMaxOpset = 17;

// Runs onnx::checker::check_model, then onnx::shape_inference::InferShapes
// (strict mode, on a copy). When the model's IR version or default opset is
// newer than the bundled ONNX knows, the checker is skipped with an info
// finding saying why, shape inference still runs and its failures are
// warnings (the bundled ONNX may just not know the newer operators).
// Thread-safe for distinct or shared const models.
std::vector<Finding> Check(const Model& m);

// A copy of `m` with value_info filled by ONNX shape inference (lenient mode:
// nodes it cannot infer are left without a type). Errors (kInvalidArgument)
// carry shape inference's message when it refuses the model outright.
Result<Model> WithInferredShapes(const Model& m);

}  // namespace parity
