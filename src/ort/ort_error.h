// INTERNAL to src/ort/: turning ORT's exceptions into parity Errors at the
// adapter edge. Includes ORT headers; never include it outside src/ort/.
#pragma once

#include <onnxruntime_cxx_api.h>

#include "core/status.h"

namespace parity::ort {

enum class OrtStage { kLoad, kRun };

// Maps ORT's error code to parity's, keeping ORT's message (it often names
// the node). At load: a malformed or invalid model is kInvalidArgument, a
// missing file kNotFound, an operator ORT does not implement kUnsupported.
// At run: an invalid argument stays kInvalidArgument, everything else is
// kRuntime.
Error FromOrtException(const Ort::Exception& e, OrtStage stage);

}  // namespace parity::ort
