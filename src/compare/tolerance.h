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
// reference_fraction (a rule's cap; the derived-model rules of
// engine/quant/output_tolerance.h set it): after the mode, the band may not
// exceed that fraction of rms(ref): atol = min(atol, fraction * rms(ref))
// (for decide_by max / mean, when atol + rtol * max|ref| / rms(ref) exceeds
// it: atol = fraction * rms(ref), rtol = 0). A band read from the model under
// test (its output's quantization scale) is thus bounded by the reference's
// own magnitude.
//
// Slices (ResolvedTolerance::slice_rule; compare/slice_bands.h): a band that
// follows the reference (scaled without a set atol, calibrated, or capped)
// is, on an output whose reference mixes scales along an axis, taken again
// for each slice along it: kResolve resolves the policy on the slice (its own
// rms, its own second reference); kCap keeps the output's band capped by the
// slice's rms (SliceCapBand). A band fixed by the user is never split.
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
  std::optional<double> reference_fraction;  // cap: the band <= this x rms(ref) (header comment)
  std::string why;  // where the rule comes from, for rules_fired ("1 quantization step, scale 0.02"); may be empty
};

struct TolerancePolicy {
  ToleranceRule global;  // pattern unused
  std::vector<ToleranceRule> rules;
  ToleranceMode mode = ToleranceMode::kScaled;
  double calibration_multiplier = 10;
  bool quantized = false;
};

// How a tensor whose reference mixes scales is judged per slice (header comment).
enum class SliceBandRule { kNone, kResolve, kCap };

// One group of slices of one scale along a mixed-scale axis, as reported.
struct SlicePart {
  std::string slices;                 // their indices along the axis, "4-83"
  int64_t count = 0;                  // how many
  double rms_min = 0, rms_max = 0;    // rms(ref) of its slices
  double atol_min = 0, atol_max = 0;  // their bands' atol
  double rtol = 0;                    // the largest of their rtol
  std::string rule;                   // how their bands were found
  int64_t failed = 0;                 // slices outside their band
  int64_t mismatches = 0;             // elements outside their slice's band
  double max_abs = 0;
  double score = 0;                   // the worst slice's error score (judge.h)
};

// A tensor judged slice by slice (JudgeTensor; compare/slice_bands.h).
struct SliceBands {
  int axis = -1;
  int64_t length = 0;    // slices along the axis
  double gap = 0;        // the jump between neighbouring scales that made it split
  int64_t failed = 0;    // slices outside their own band
  std::vector<SlicePart> parts;
};

struct ResolvedTolerance {
  Tolerance tolerance;
  ToleranceMode mode = ToleranceMode::kScaled;
  std::vector<std::string> rules_fired;  // human-readable, in order applied
  std::vector<std::string> warnings;     // see the header comment
  double ref_rms = 0;                    // rms(ref) over finite elements (floating refs)
  double ref_absmax = 0;                 // max|ref| over finite elements (floating refs)
  SliceBandRule slice_rule = SliceBandRule::kNone;
  double reference_fraction = 0;         // kCap: the rule's cap
  std::optional<SliceBands> slices;      // set when JudgeTensor judged it slice by slice

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

// The conditioning floor (issue 50, docs/compare.md "Conditioning"):
// `spread` is how far the model's own float32 evaluation moves this output
// for this sample when its float inputs move by one unit in the last place
// (max |f(x') - f(x)| over a few such x'). On an ill-conditioned sample (a
// random-weight network fed noise) float32 itself cannot decide anything
// below a multiple of it; the band is raised to kConditioningFactor x
// spread where it is narrower, and the rule says so. On a well-conditioned
// sample the spread is far below the scaled band and nothing changes. A
// band the user fixed (an atol given, SliceBandRule::kNone) is kept.
inline constexpr double kConditioningFactor = 16;
void ApplyConditioningFloor(ResolvedTolerance& out, double spread);

// The band of one slice under SliceBandRule::kCap: the whole tensor's band
// (`whole`, resolved for the whole reference; for decide_by max / mean made
// absolute with the whole's max|ref| / rms), at most reference_fraction x
// `slice_rms` (at least float32's smallest normal).
Tolerance SliceCapBand(const ResolvedTolerance& whole, double slice_rms);

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
