// Shared between baseline.cc (writing) and baseline_verify.cc (checking):
// the JSON form of one file record of the manifest.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/baseline.h"

namespace parity::baseline_internal {

nlohmann::json FileToJson(const BaselineFile& f);
// kCorrupt when a required key is missing or of the wrong type, or the path
// is not a plain relative path inside the baseline directory.
Result<BaselineFile> FileFromJson(const nlohmann::json& j);

}  // namespace parity::baseline_internal
