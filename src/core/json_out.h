// The one JSON serializer. Every JSON text parity writes (reports, the
// baseline manifest, repro configs, the Python extension's results, JSON
// quoted in error messages) is produced here, so one policy holds for all:
//
// - Strings that are not valid UTF-8 (tensor and node names come from
//   models, docs/security.md) have each bad byte replaced by U+FFFD; the
//   serializer never throws on them (nlohmann's error_handler_t::replace).
// - Non-finite doubles become null, as nlohmann writes them; writers that
//   must keep them put "inf"/"-inf"/"nan" strings (JsonNumber,
//   report/json/json_helpers.h) before calling this.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace parity {

// `j` as JSON text: compact with indent < 0, else pretty-printed with
// `indent` spaces per level (no trailing newline). Never fails.
std::string ToJsonText(const nlohmann::json& j, int indent = -1);
// The same for insertion-ordered documents (the PyTorch dump manifest).
std::string ToJsonText(const nlohmann::ordered_json& j, int indent = -1);

// Writes ToJsonText(j, 2) and a newline to `path` whole or not at all
// (core/atomic_file.h). Errors (kNotFound, kInvalidArgument) name `path`.
Status WriteJsonFile(const std::filesystem::path& path, const nlohmann::json& j);

}  // namespace parity
