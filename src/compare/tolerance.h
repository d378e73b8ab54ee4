// Tolerance policies: a value type resolved per output, with the rules that
// fired recorded so a user sees why a tolerance was chosen.
//
// Resolution order for an output (each step overrides the fields it sets):
//   1. per-dtype default (DefaultTolerance below; `quantized` target: 1e-1);
//   2. the global atol/rtol/decide_by (command line --atol/--rtol);
//   3. per-output rules, exact names first, then globs in the order given;
//   4. the mode:
//      scaled      (the default) unless an atol was set in step 2 or 3:
//                  atol = ScaledAtolFactor(dtype) * rms(ref) (float32: 1e-4,
//                  float16/bfloat16: 1e-2, float64: 1e-9), at least the
//                  dtype's smallest normal number; rtol stays the dtype's.
//                  The band follows the output's own magnitude, so an output
//                  of 1e-9 cannot pass a change of 100% under an absolute
//                  1e-4 (docs/compare.md says why these constants).
//      fixed       nothing more.
//      adaptive    probabilities: a reference in [0,1] whose slices sum to 1
//                  (within 1e-3) along some axis of length K > 1 gets
//                  atol *= 1/K (judged relative to the mean probability).
//                  near-constant: a reference whose std is at most 1/100 of
//                  the tolerance band (atol + rtol*max|ref|) and whose
//                  max|ref| > 0 gets atol = max(std/10, 4*eps(dtype)*max|ref|)
//                  and rtol = 0: the band can no longer swallow its variation.
//      calibrated  given noise metrics (a second reference, e.g. fp64 or a
//                  re-run, compared with the first): atol = multiplier *
//                  max(noise.max_abs, kCalibrationFloor * eps(dtype) * rms(ref)),
//                  rtol = 0. Without a second reference for the output it
//                  falls back to scaled and says so.
//
// Warnings (ResolvedTolerance::warnings): an atol at least max|ref| (every
// element of the reference fits in the band: any output this small passes);
// a calibrated atol above 1% of rms(ref) (the reference's own noise is too
// large to see a 1% fault).
//
// decide_by, given the metrics m of the output (NaN/Inf mismatches always fail):
//   kElementwise  m.mismatches == 0 (NumPy isclose on every element).
//   kMax          m.max_abs  <= atol + rtol * max|ref|.
//   kMean         m.mean_abs <= atol + rtol * rms(ref).
//   kQuantile(q)  the q-quantile of |d|/(atol + rtol|r|) is <= 1, i.e.
//                 m.mismatches <= floor((1 - q) * m.count).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compare/metrics.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

enum class Statistic { kElementwise, kMax, kMean, kQuantile };
enum class ToleranceMode { kScaled, kFixed, kAdaptive, kCalibrated };

std::string_view StatisticName(Statistic s);  // "elementwise", "max", "mean", "quantile"
std::string_view ToleranceModeName(ToleranceMode m);
Result<Statistic> StatisticFromName(std::string_view name);
Result<ToleranceMode> ToleranceModeFromName(std::string_view name);

struct Tolerance {
  double atol = 0;
  double rtol = 0;
  Statistic decide_by = Statistic::kElementwise;
  double quantile = 0.999;  // used by kQuantile
};

// Per-dtype default: float32 1e-4/1e-3, float16/bfloat16 1e-2/1e-2,
// float64 1e-7/1e-6, integers and bools 0/0 (exact); `quantized` target
// (int8-quantized derived model): 1e-1/1e-1 for floating outputs.
Tolerance DefaultTolerance(DType dtype, bool quantized);

// The scaled mode's atol per unit of rms(ref): float32 1e-4, float16 and
// bfloat16 1e-2 (1e-1 for a quantized target), float64 1e-9; 0 for
// integers and bools (exact).
double ScaledAtolFactor(DType dtype, bool quantized);

// The calibrated mode's floor, in units of eps(dtype) * rms(ref): a reference
// that happens to agree with its fp64 twin to the last bit still gets a band
// of 100 float32 roundings of its scale.
inline constexpr double kCalibrationFloor = 100;

// A partial tolerance: fields left empty keep the value from earlier steps.
struct ToleranceRule {
  std::string pattern;  // exact name or fnmatch glob (*, ?, [...])
  std::optional<double> atol, rtol, quantile;
  std::optional<Statistic> decide_by;
  std::optional<ToleranceMode> mode;
  std::string why;  // where the rule comes from, for rules_fired ("1 quantization step, scale 0.02"); may be empty
};

struct TolerancePolicy {
  ToleranceRule global;  // pattern unused
  std::vector<ToleranceRule> rules;
  ToleranceMode mode = ToleranceMode::kScaled;
  double calibration_multiplier = 10;
  bool quantized = false;
};

struct ResolvedTolerance {
  Tolerance tolerance;
  ToleranceMode mode = ToleranceMode::kScaled;
  std::vector<std::string> rules_fired;  // human-readable, in order applied
  std::vector<std::string> warnings;     // see the header comment
  double ref_rms = 0;                    // rms(ref) over finite elements (floating refs)
  double ref_absmax = 0;                 // max|ref| over finite elements (floating refs)

  // The last rule that fired: why the tolerance is what it is.
  std::string Why() const { return rules_fired.empty() ? "" : rules_fired.back(); }
};

// Resolves the tolerance of output `name` with reference `ref` (and, for the
// calibrated mode, the metrics of the second reference against the first).
// `test_dtype`, when it differs from ref's (a float64 reference judging a
// float32 run), makes the dtype steps use the looser of the two dtypes.
// `reference_statistics`, when given, are ref's count, ref_finite and
// ref_min/max/mean/std (MetricsOptions::band_from_reference hands them over);
// otherwise Resolve computes them with a pass over ref.
ResolvedTolerance Resolve(std::string_view name, const Tensor& ref, const TolerancePolicy& policy,
                          const TensorMetrics* noise = nullptr, std::optional<DType> test_dtype = std::nullopt,
                          const TensorMetrics* reference_statistics = nullptr);

// True when `name` matches the glob `pattern` (fnmatch without flags).
bool GlobMatch(std::string_view pattern, std::string_view name);

// Applies decide_by; returns "" when it passes, else the reason.
std::string Judge(const TensorMetrics& m, const Tolerance& tol);

// Parses "PATTERN:atol=1e-3,rtol=0,by=max,q=0.99,mode=adaptive" (command line).
Result<ToleranceRule> ParseToleranceRule(std::string_view spec);

// JSON form: {"atol":..,"rtol":..,"decide_by":"max","quantile":..,"mode":"adaptive",
// "calibration_multiplier":10,"quantized":false,"outputs":[{"match":"logits","atol":..},...]}.
// Unknown keys and wrong types are errors naming the key.
Result<TolerancePolicy> TolerancePolicyFromJson(const nlohmann::json& j);
nlohmann::json TolerancePolicyToJson(const TolerancePolicy& p);

}  // namespace parity
