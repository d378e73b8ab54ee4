// INTERNAL to src/ort/: turning ORT's exceptions into parity Errors at the
// adapter edge. Includes ORT headers; never include it outside src/ort/.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <optional>
#include <string>

#include "core/status.h"

namespace parity::ort {

enum class OrtStage { kLoad, kRun };

// Maps ORT's error code to parity's, keeping ORT's message (it often names
// the node). At load: a malformed or invalid model is kInvalidArgument, a
// missing file kNotFound, an operator ORT does not implement kUnsupported.
// At run: an invalid argument stays kInvalidArgument, everything else is
// kRuntime.
// A model whose opset is newer than this ORT (ORT says "Opset 28 is under
// development ... Current official support for domain ai.onnx is till opset
// 26") is kInvalidArgument with OpsetTooNewMessage, whatever ORT's code.
Error FromOrtException(const Ort::Exception& e, OrtStage stage);

struct OpsetTooNew {
  std::string domain;
  int64_t opset = 0;    // the model's
  int64_t highest = 0;  // this ORT's highest for the domain
};
// Read from ORT's load error; nullopt for any other message.
std::optional<OpsetTooNew> ParseOpsetTooNew(const std::string& message);
// "the model uses opset 28 of domain ai.onnx, newer than ONNX Runtime 1.29.0
// supports (its highest is 26): ..." (one line).
std::string OpsetTooNewMessage(const OpsetTooNew& o);

}  // namespace parity::ort
