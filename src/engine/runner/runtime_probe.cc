#include "engine/runner/runtime_probe.h"

#include "engine/runner/runner.h"
#include "onnx/builder.h"

namespace parity {

std::optional<Finding> OpsetBeyondRuntime(const ModelInfo& info) {
  const auto it = info.opsets.find("");
  if (it == info.opsets.end() || it->second < 1) return std::nullopt;
  ModelBuilder b(static_cast<int>(it->second));
  b.Output(b.Relu(b.Input("x", DType::kFloat32, Shape{1})), "y");
  auto probe = b.Build();
  if (!probe) return std::nullopt;
  auto runner = MakeSessionRunner(RunConfig{});
  auto ready = runner->Prepare({.model = "opset probe", .loaded = &*probe, .keep_session = true});
  // ort_error.cc's one line for this refusal, the only one a one-node Relu meets.
  if (ready || ready.error().message().find("newer than ONNX Runtime") == std::string::npos) return std::nullopt;
  return Finding{.severity = Severity::kError, .stage = "runtime", .message = ready.error().message()};
}

}  // namespace parity
