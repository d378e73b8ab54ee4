// INTERNAL to src/ort/: registering execution providers on session options.
// Includes ORT headers; never include it outside src/ort/.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace parity::ort {

// Appends `providers` (parity's short or ORT's names) in priority order.
// kInvalidArgument for a name parity does not know; kUnsupported for a known
// provider this ORT build lacks, naming the available ones. CPU is ORT's
// implicit fallback: it is only registered explicitly when listed ahead of
// another provider. May throw Ort::Exception.
Status AppendProviders(Ort::SessionOptions& options, const std::vector<std::string>& providers);

}  // namespace parity::ort
