#include "engine/fix/fix.h"

#include <chrono>
#include <system_error>

#include <fmt/format.h>

#include "core/output_dir.h"
#include "engine/fix/fix_internal.h"
#include "engine/load/reference_model.h"

namespace fs = std::filesystem;

namespace parity {
namespace fix_internal {

CheckOptions ProbeOptions(const CheckOptions& base) {
  CheckOptions o = base;
  o.locate_on_failure = false;
  o.latency_runs = 1;
  o.latency_warmup = 0;
  o.latency_seconds = 0.05;
  o.curve_seconds = 0;
  o.progress = nullptr;
  return o;
}

bool Passed(const CheckReport& report) { return report.overall == Verdict::kPass; }

fs::path FreshPath(const fs::path& dir, const std::string& stem, const std::string& ext) {
  std::error_code ec;
  fs::path p = dir / (stem + ext);
  for (int i = 2; fs::exists(p, ec) || fs::is_symlink(p, ec); ++i) p = dir / fmt::format("{}-{}{}", stem, i, ext);
  return p;
}

}  // namespace fix_internal

namespace {

std::optional<int64_t> FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(size));
}

// The mean latency the check measured for `config` (its label).
std::optional<double> LatencyOf(const CheckReport& report, const RunConfig& config) {
  for (const auto& p : report.performance)
    if (p.config == config.Label() && p.latency.runs > 0) return p.latency.mean_ms;
  return std::nullopt;
}

std::vector<std::string> Top1Lines(const CheckReport& before, const CheckReport& after) {
  std::vector<std::string> lines;
  for (const auto& b : before.top1)
    for (const auto& a : after.top1)
      if (a.output == b.output)
        lines.push_back(fmt::format("{}: top-1 agreement {}/{} before, {}/{} after", b.output, b.agree, b.rows,
                                    a.agree, a.rows));
  return lines;
}

// The fixed form, the deployed form and the reference (the float model, or
// the same model under the reference config), each with its latency and size.
std::vector<FixForm> Costs(const FixOptions& o, const CheckReport& base, const CheckReport& fixed,
                           const fix_internal::Found& found) {
  const CheckOptions& c = o.check;
  const std::string reference_path = ReferenceFile(c.reference, c.model_path).string();
  return {
      {.what = "fixed", .path = found.fixed_path, .config = found.verified.target.Label(),
       .latency_ms = LatencyOf(fixed, found.verified.target), .size_bytes = FileSize(found.fixed_path)},
      {.what = "deployed", .path = c.model_path, .config = c.target.Label(), .latency_ms = LatencyOf(base, c.target),
       .size_bytes = FileSize(c.model_path)},
      {.what = std::string(ReferenceRole(c.reference)), .path = reference_path, .config = c.reference.config.Label(),
       .latency_ms = LatencyOf(base, c.reference.config), .size_bytes = FileSize(reference_path)},
  };
}

// Which kind of fix the check calls for.
bool EpCheck(const CheckOptions& c) {
  const auto& t = c.target.providers;
  const auto& r = c.reference.config.providers;
  return !t.empty() && t.front() != "cpu" && t != r;
}

// The first failing stage when the numerics stage did not fail.
std::optional<std::string> FailedOutsideNumerics(const CheckReport& report) {
  std::optional<std::string> other;
  for (const auto& stage : report.stages) {
    if (stage.status != Verdict::kFail) continue;
    if (stage.name == "numerics") return std::nullopt;
    if (!other) other = stage.name;
  }
  return other;
}

// Why the first check is not searched: it passes (`needed` false), it is
// NOT JUDGED (no sample judged: no change can make one pass), or it fails
// outside its numerics. nullopt: search.
std::optional<std::string> NoSearch(const CheckReport& base, bool& needed) {
  if (fix_internal::Passed(base)) {
    needed = false;
    return "the check passes";
  }
  if (base.overall != Verdict::kFail)
    return fmt::format("the check is {}, not failing: parity fix needs a check that judges and fails",
                       base.OverallWord());
  if (auto other = FailedOutsideNumerics(base))
    return fmt::format("the check fails in its {} stage, not in its numerics: parity fix changes numerics only",
                       *other);
  return std::nullopt;
}

}  // namespace

Result<FixResult> Fix(const FixOptions& options) {
  using fix_internal::Found;
  const auto start = std::chrono::steady_clock::now();
  PARITY_RETURN_IF_ERROR(ClaimOutputDir(options.out_dir, "fix"));
  FixResult result;
  PARITY_ASSIGN_OR_RETURN(CheckReport base, RunCheck(options.check));
  result.verdict_before = std::string(base.OverallWord());
  if (auto why = NoSearch(base, result.needed)) {
    result.kind = "none";
    result.note = *why;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  Result<std::optional<Found>> found =
      TargetDerivedFrom(options.check.reference) ? fix_internal::FixDerived(options, base, result)
      : EpCheck(options.check)                                ? fix_internal::FixEpOptions(options, base, result)
                                                              : fix_internal::FixOptimizers(options, base, result);
  if (!found) return std::unexpected(found.error());
  result.runs = static_cast<int>(result.search.probes.size());
  if (*found) {
    // The answer once more, timed as the first check was: its verdict and cost.
    CheckOptions verify = (*found)->verified;
    verify.locate_on_failure = false;
    verify.curve_seconds = 0;
    verify.progress = nullptr;
    PARITY_ASSIGN_OR_RETURN(CheckReport fixed, RunCheck(verify));
    result.verdict_after = std::string(fixed.OverallWord());
    result.found = fix_internal::Passed(fixed);
    if (!result.found) result.note = "the change passed as a probe but not when checked again with timed runs";
    result.cost = Costs(options, base, fixed, **found);
    result.top1 = Top1Lines(base, fixed);
  } else if (result.note.empty()) {
    result.note = result.search.budget_spent
                      ? fmt::format("no change passed within the budget of {} checks", result.runs)
                      : "no change in the search space passed";
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace parity
