// The console text of `parity baseline` and `parity baseline verify`. Their
// JSON is report/json/baseline_json.h.
#pragma once

#include <string>

#include "engine/baseline/baseline.h"

namespace parity {

// What was written: the headline (model, folder, config label, samples, runs
// and the memory they observed), then a line per sample with what it found.
std::string FormatBaselineWritten(const BaselineResult& r, const std::string& model, const std::string& dir,
                                  const std::string& config_label);

// Findings listed before "... N more" (all of them are in --json).
inline constexpr size_t kVerifyFindingsShown = 10;

// The verdict first, then what a reader needs to act on, capped at
// kVerifyFindingsShown findings (a broken baseline can have hundreds);
// `json_path` (may be empty) is where the rest went.
std::string FormatVerifySummary(const VerifyResult& r, const std::string& dir, const std::string& json_path);

}  // namespace parity
