// Static validation of a model with the ONNX library parity is built with
// (1.23, scripts/fetch-onnx.sh): the checker and shape inference. Findings are
// collected, never thrown; Check never fails.
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
  // An op ONNX's standard does not define (an unknown op of the default
  // domain, or any op of another domain: ORT's com.microsoft contrib ops,
  // SimplifiedLayerNormalization, ...): ONNX cannot judge it, a runtime that
  // registers it can run it, so the runtime decides (check: ORT's session).
  bool runtime_decides = false;
};

// The newest IR version and default-domain opset the ONNX library knows
// (IR 11 and opset 25 for ONNX 1.23), read from the library itself.
int64_t CheckerMaxIrVersion();
int64_t CheckerMaxOpset();

// Runs onnx::checker::check_model (full check: with shape inference, strict
// mode, on a copy), then reports graph outputs left without a type. Nodes of
// ops ONNX does not define are one finding per op (runtime_decides: an
// error for an unknown op of the default domain, info for other domains)
// and the checker judges the rest of the graph without them. When the
// model's IR version or default opset is newer than the library knows, the
// checker is skipped with an info finding saying why, shape inference still
// runs and its failures are warnings (the library may not know the newer
// operators).
// Thread-safe for distinct or shared const models.
std::vector<Finding> Check(const Model& m);

// The names (graph.h's) of the top-level nodes whose ops ONNX does not
// define: what a runtime registers (ORT's contrib ops, written by its
// transformers optimizer: SkipLayerNormalization, FastGelu, its
// SimplifiedLayerNormalization in the default domain).
std::vector<std::string> RuntimeOpNodes(const Model& m);

// A copy of `m` with value_info filled by ONNX shape inference (lenient mode:
// nodes it cannot infer are left without a type). Errors (kInvalidArgument)
// carry shape inference's message when it refuses the model outright.
Result<Model> WithInferredShapes(const Model& m);

// The same value_info for a reader of types (GraphView, WithExtraOutputs),
// computed without copying the weights: the result's initializers of 1 MiB
// or more keep their type and dims but no bytes. Never run or save it.
Result<Model> InferredStructure(const Model& m);

}  // namespace parity
