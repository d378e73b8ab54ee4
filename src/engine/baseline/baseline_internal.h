// Shared between baseline.cc (writing), baseline_verify.cc (checking) and
// baseline_target.cc (where it may go): the manifest's JSON records.
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

// One sample of the manifest: its files and findings.
nlohmann::json SampleToJson(const BaselineSample& s);

// Whether the baseline may go to `dir`, checked before anything is written
// (baseline_target.cc): new or empty, or with `overwrite` an earlier
// parity.baseline/1 folder holding only what its manifest lists and none of
// this command's inputs. kInvalidArgument naming what is in the way.
Status CheckTargetDir(const std::filesystem::path& dir, bool overwrite);

}  // namespace parity::baseline_internal
