// Shared by the fix searches (fix.cc, optimizer_fix.cc, derived_fix.cc).
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"
#include "engine/check/check.h"
#include "engine/fix/fix.h"

namespace parity::fix_internal {

// The check as a probe runs it: no latency runs, no localization, no curve.
CheckOptions ProbeOptions(const CheckOptions& base);
// Whether a probe's check passed.
bool Passed(const CheckReport& report);
// `dir/stem.ext`, or `dir/stem-2.ext`, ... : the first name no file has.
std::filesystem::path FreshPath(const std::filesystem::path& dir, const std::string& stem, const std::string& ext);

// The searches: each fills result.kind, seeds, search, change, and on success
// the written file, the command and `verified` (the fixed form's check
// options, run once more by Fix for its cost).
struct Found {
  CheckOptions verified;
  std::string fixed_path;  // the fixed model (derived fixes), else the check's model
};
Result<std::optional<Found>> FixOptimizers(const FixOptions& options, const CheckReport& base, FixResult& result);
Result<std::optional<Found>> FixDerived(const FixOptions& options, const CheckReport& base, FixResult& result);
Result<std::optional<Found>> FixEpOptions(const FixOptions& options, const CheckReport& base, FixResult& result);

}  // namespace parity::fix_internal
