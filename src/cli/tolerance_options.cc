// The tolerance option group shared by compare, locate, check and baseline verify.
#include <fstream>

#include <fmt/format.h>

#include "cli/command.h"
#include "core/json_in.h"
#include "core/regular_file.h"

namespace parity::cli {

void AddToleranceOptions(CLI::App* app, ToleranceOptions* o) {
  app->add_option("--atol", o->atol,
                  "a fixed absolute tolerance for every output (default: relative to each output's scale, "
                  "float32 1e-4 x rms(reference); docs/compare.md)")
      ->check(NonNegative());
  app->add_option("--rtol", o->rtol, "relative tolerance for every output (default per dtype: float32 1e-3)")
      ->check(NonNegative());
  app->add_option("--tolerance", o->file, "tolerance policy as a JSON file (docs/compare.md)")
      ->check(CLI::ExistingFile);
  app->add_option("--tol", o->rules,
                  "per-output rule 'PATTERN:atol=..,rtol=..,by=max|mean|quantile|elementwise,q=..,mode=..,cap=..' "
                  "(exact name or glob; repeatable; cap: the band at most that fraction of rms(ref))");
  app->add_option("--mode", o->mode,
                  "scaled (default: atol relative to each output's scale), fixed (per-dtype absolute atol), "
                  "adaptive or calibrated")
      ->check(CLI::IsMember({"scaled", "fixed", "adaptive", "calibrated"}));
  app->add_option("--by", o->by, "which statistic decides: elementwise (default), max, mean, quantile");
  app->add_option("--quantile", o->quantile, "with --by quantile: the quantile of the error that must pass")
      ->check(CLI::Range(0.0, 1.0));
  app->add_flag("--quantized", o->quantized, "the test side is int8-quantized: looser float defaults (1e-1) where nothing better is known (check --reference-model derives each output's band from the model's scales: docs/quantized.md)");
}

Result<TolerancePolicy> ResolveTolerance(const ToleranceOptions& o) {
  TolerancePolicy policy;
  if (!o.file.empty()) {
    PARITY_ASSIGN_OR_RETURN(std::string text, ReadRegularFile(o.file, kMaxConfigBytes));
    PARITY_ASSIGN_OR_RETURN(nlohmann::json j, ParseJsonBounded(text, o.file));
    PARITY_ASSIGN_OR_RETURN(policy, WithContext(TolerancePolicyFromJson(j), o.file));
  }
  if (o.atol >= 0) policy.global.atol = o.atol;
  if (o.rtol >= 0) policy.global.rtol = o.rtol;
  if (!o.by.empty()) {
    PARITY_ASSIGN_OR_RETURN(auto by, WithContext(StatisticFromName(o.by), "--by"));
    policy.global.decide_by = by;
  }
  if (o.quantile >= 0) {
    if (o.quantile > 1) return InvalidArgument("--quantile: expected a value in [0, 1]");
    policy.global.quantile = o.quantile;
  }
  if (!o.mode.empty()) {
    PARITY_ASSIGN_OR_RETURN(policy.mode, WithContext(ToleranceModeFromName(o.mode), "--mode"));
  }
  if (o.quantized) policy.quantized = true;
  for (const auto& spec : o.rules) {
    PARITY_ASSIGN_OR_RETURN(auto rule, WithContext(ParseToleranceRule(spec), "--tol"));
    policy.rules.push_back(std::move(rule));
  }
  return policy;
}

}  // namespace parity::cli
