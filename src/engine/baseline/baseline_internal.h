// Shared between baseline.cc (writing) and baseline_verify.cc (checking):
// the JSON form of one file record of the manifest.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/baseline/baseline.h"

namespace parity::baseline_internal {

nlohmann::json FileToJson(const BaselineFile& f);
// kCorrupt when a required key is missing or of the wrong type, or the path
// is not a plain relative path inside the baseline directory.
Result<BaselineFile> FileFromJson(const nlohmann::json& j);

// Parses a manifest's text (`path` names it in errors) and checks the type of
// every field verify reads (docs/security.md): kCorrupt for malformed JSON or
// a wrong type, no samples or a sample without files; kInvalidArgument when
// the schema is not parity.baseline/1. Never throws.
struct ManifestSample {
  std::string name;
  std::vector<BaselineFile> files;
};
struct ParsedManifest {
  nlohmann::json json;
  std::vector<ManifestSample> samples;
};
Result<ParsedManifest> ParseManifest(std::string_view text, const std::string& path);

}  // namespace parity::baseline_internal
