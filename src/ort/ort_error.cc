#include "ort/ort_error.h"

#include <cctype>
#include <string>

namespace parity::ort {

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
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.pop_back();
  return Error(code, std::move(message));
}

}  // namespace parity::ort
