// INTERNAL to src/ort/: registering execution providers on session options.
// Includes ORT headers; never include it outside src/ort/.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <string>
#include <vector>

#include "core/run_config.h"
#include "core/status.h"

namespace parity::ort {

// Appends `providers` (parity's short or ORT's names) in priority order.
// kInvalidArgument for a name parity does not know; kUnsupported for a known
// provider this ORT build lacks, naming the available ones. CPU is ORT's
// implicit fallback: it is only registered explicitly when listed ahead of
// another provider. May throw Ort::Exception.
// A provider ORT does not have built in is looked up among the EP devices of
// the plugin libraries (ep_libraries.h), registered on first need, by ORT's EP
// name or by the library's registration name, and appended with
// SessionOptionsAppendExecutionProvider_V2 and its config.provider_options.
Status AppendProviders(Ort::SessionOptions& options, const RunConfig& config);

// The EP names a registered plugin library brought (ep_libraries.cc); empty
// when `name` is not a registered library.
std::vector<std::string> EpNamesOfLibrary(const std::string& name);

}  // namespace parity::ort
