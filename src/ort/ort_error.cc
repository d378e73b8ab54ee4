#include "ort/ort_error.h"

#include "ort/runtime.h"

#include <fmt/format.h>

#include <cctype>
#include <regex>
#include <string>

namespace parity::ort {

std::optional<OpsetTooNew> ParseOpsetTooNew(const std::string& message) {
  // ORT's model_load_utils.h: "... Opset 28 is under development ... Current
  // official support for domain ai.onnx is till opset 26."
  static const std::regex kLimit(R"(Opset (\d+) is under development[\s\S]*official support for domain (\S+) is till opset (\d+))");
  std::smatch m;
  if (!std::regex_search(message, m, kLimit)) return std::nullopt;
  return OpsetTooNew{.domain = m[2].str(), .opset = std::stoll(m[1].str()), .highest = std::stoll(m[3].str())};
}

std::string OpsetTooNewMessage(const OpsetTooNew& o) {
  return fmt::format("the model uses opset {} of domain {}, newer than ONNX Runtime {} supports (its highest is {}): "
                     "export it at opset {} or lower, or run a newer ONNX Runtime (--ort-library)",
                     o.opset, o.domain, OrtVersion(), o.highest, o.highest);
}

Error FromOrtException(const Ort::Exception& e, OrtStage stage) {
  ErrorCode code = ErrorCode::kRuntime;
  switch (e.GetOrtErrorCode()) {
    case ORT_INVALID_ARGUMENT:
      code = ErrorCode::kInvalidArgument;
      break;
    case ORT_NO_SUCHFILE:
      code = ErrorCode::kNotFound;
      break;
    case ORT_NO_MODEL:
    case ORT_INVALID_PROTOBUF:
    case ORT_INVALID_GRAPH:
      // A broken model is the user's input; while running, it cannot happen.
      code = stage == OrtStage::kLoad ? ErrorCode::kInvalidArgument : ErrorCode::kRuntime;
      break;
    case ORT_NOT_IMPLEMENTED:
      code = ErrorCode::kUnsupported;
      break;
    default:
      code = ErrorCode::kRuntime;
      break;
  }
  // ORT's messages often end in a newline; parity prints errors on one line.
  std::string message = e.what();
  // An opset newer than this ORT is the user's input, one line (issue 54),
  // not ORT's C++ signature and exit 3.
  if (auto too_new = ParseOpsetTooNew(message)) return Error(ErrorCode::kInvalidArgument, OpsetTooNewMessage(*too_new));
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.pop_back();
  return Error(code, std::move(message));
}

}  // namespace parity::ort
