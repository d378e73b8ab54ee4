#include "compare/tolerance.h"

#include "compare/band.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/slice_bands.h"

namespace parity {
namespace {

double Epsilon(DType t) { return MachineEpsilon(t); }  // compare/slice_bands.h

void Overlay(Tolerance& t, ToleranceMode& mode, double& cap, const ToleranceRule& r) {
  if (r.reference_fraction) cap = *r.reference_fraction;
  if (r.atol) t.atol = *r.atol;
  if (r.rtol) t.rtol = *r.rtol;
  if (r.decide_by) t.decide_by = *r.decide_by;
  if (r.quantile) t.quantile = *r.quantile;
  if (r.mode) mode = *r.mode;
}

bool HasAny(const ToleranceRule& r) {
  return r.atol || r.rtol || r.decide_by || r.quantile || r.mode || r.reference_fraction;
}

std::string Describe(const Tolerance& t) {
  std::string s = fmt::format("atol {:g}, rtol {:g}, decided by {}", t.atol, t.rtol, StatisticName(t.decide_by));
  if (t.decide_by == Statistic::kQuantile) s += fmt::format(" q={:g}", t.quantile);
  return s;
}

// The axis (and its length) along which a [0,1] reference sums to 1, if any.
std::optional<std::pair<int, int64_t>> ProbabilityAxis(const Tensor& ref) {
  if (!IsFloating(ref.dtype()) || ref.size() == 0) return std::nullopt;
  const Shape& shape = ref.shape();
  for (int axis = static_cast<int>(shape.size()) - 1; axis >= 0; --axis) {
    const int64_t len = shape[axis];
    if (len < 2) continue;
    int64_t inner = 1;
    for (size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
    const int64_t outer = ref.size() / (len * inner);
    bool ok = true;
    for (int64_t o = 0; o < outer && ok; ++o) {
      for (int64_t in = 0; in < inner && ok; ++in) {
        double sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += ref.GetAsDouble((o * len + j) * inner + in);
        ok = std::fabs(sum - 1.0) <= 1e-3;
      }
    }
    if (ok) return std::make_pair(axis, len);
  }
  return std::nullopt;
}

}  // namespace

std::string_view StatisticName(Statistic s) {
  switch (s) {
    case Statistic::kElementwise: return "elementwise";
    case Statistic::kMax: return "max";
    case Statistic::kMean: return "mean";
    case Statistic::kQuantile: return "quantile";
  }
  return "?";
}

std::string_view ToleranceModeName(ToleranceMode m) {
  switch (m) {
    case ToleranceMode::kScaled: return "scaled";
    case ToleranceMode::kFixed: return "fixed";
    case ToleranceMode::kAdaptive: return "adaptive";
    case ToleranceMode::kCalibrated: return "calibrated";
  }
  return "?";
}

Result<Statistic> StatisticFromName(std::string_view name) {
  for (Statistic s : {Statistic::kElementwise, Statistic::kMax, Statistic::kMean, Statistic::kQuantile}) {
    if (name == StatisticName(s)) return s;
  }
  return InvalidArgument(fmt::format("unknown statistic '{}' (elementwise, max, mean, quantile)", name));
}

Result<ToleranceMode> ToleranceModeFromName(std::string_view name) {
  for (ToleranceMode m : {ToleranceMode::kScaled, ToleranceMode::kFixed, ToleranceMode::kAdaptive, ToleranceMode::kCalibrated}) {
    if (name == ToleranceModeName(m)) return m;
  }
  return InvalidArgument(fmt::format("unknown tolerance mode '{}' (scaled, fixed, adaptive, calibrated)", name));
}

Tolerance DefaultTolerance(DType dtype, bool quantized) {
  if (IsFloating(dtype) && quantized) return {.atol = 1e-1, .rtol = 1e-1};
  switch (dtype) {
    case DType::kFloat32: return {.atol = 1e-4, .rtol = 1e-3};
    case DType::kFloat16:
    case DType::kBFloat16: return {.atol = 1e-2, .rtol = 1e-2};
    case DType::kFloat64: return {.atol = 1e-7, .rtol = 1e-6};
    default: return {.atol = 0, .rtol = 0};
  }
}

double ScaledAtolFactor(DType dtype, bool quantized) {
  if (IsFloating(dtype) && quantized) return 1e-1;
  switch (dtype) {
    case DType::kFloat32: return 1e-4;
    case DType::kFloat16:
    case DType::kBFloat16: return 1e-2;
    case DType::kFloat64: return 1e-9;
    default: return 0;
  }
}

bool GlobMatch(std::string_view pattern, std::string_view name) {
  return fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), 0) == 0;
}

namespace {

// With a dtype change the looser dtype's defaults apply (a float64
// reference cannot ask a float32 run for float64 precision).
DType ToleranceDType(DType ref_dtype, std::optional<DType> test_dtype) {
  if (test_dtype && *test_dtype != ref_dtype && IsFloating(*test_dtype) &&
      (!IsFloating(ref_dtype) || ScaledAtolFactor(*test_dtype, false) > ScaledAtolFactor(ref_dtype, false)))
    return *test_dtype;
  return ref_dtype;
}

// The default for `dtype`, then the policy's global overlay, the rules that
// name the tensor exactly and the first matching glob, each recorded in
// out.rules_fired. Returns whether any of them set atol.
bool ApplyRules(std::string_view name, DType ref_dtype, DType dtype, const TolerancePolicy& policy,
                ResolvedTolerance& out) {
  out.tolerance = DefaultTolerance(dtype, policy.quantized);
  out.rules_fired.push_back(fmt::format("default for {}{}{}: {}", DTypeName(dtype),
                                        dtype != ref_dtype ? " (the test's looser dtype)" : "",
                                        policy.quantized ? " (quantized target)" : "", Describe(out.tolerance)));
  bool atol_set = false;
  if (HasAny(policy.global)) {
    Overlay(out.tolerance, out.mode, out.reference_fraction, policy.global);
    atol_set |= policy.global.atol.has_value();
    out.rules_fired.push_back("global: " + Describe(out.tolerance));
  }
  for (bool exact : {true, false}) {
    for (const ToleranceRule& r : policy.rules) {
      const bool hit = exact ? r.pattern == name : (r.pattern != name && GlobMatch(r.pattern, name));
      if (!hit) continue;
      Overlay(out.tolerance, out.mode, out.reference_fraction, r);
      atol_set |= r.atol.has_value();
      out.rules_fired.push_back(fmt::format("{} '{}'{}: {}", exact ? "name" : "glob", r.pattern,
                                            r.why.empty() ? "" : " (" + r.why + ")", Describe(out.tolerance)));
      if (!exact) break;  // the first matching glob only
    }
  }
  return atol_set;
}

void WarnIfWiderThanReference(ResolvedTolerance& out) {
  const double absmax = out.ref_absmax;
  if (absmax > 0 && out.tolerance.atol >= absmax)
    out.warnings.push_back(fmt::format(
        "atol {:g} is at least the reference's largest magnitude {:g}: every element of this output fits in the "
        "band, so it passes whatever it computes (drop --atol for a band relative to the output's scale)",
        out.tolerance.atol, absmax));
}

// Scaled mode: atol relative to rms(ref), unless a rule set atol.
void ApplyScaled(ResolvedTolerance& out, bool atol_set, DType dtype, bool quantized) {
  if (atol_set) {
    WarnIfWiderThanReference(out);
    return;
  }
  Tolerance& t = out.tolerance;
  const double factor = ScaledAtolFactor(dtype, quantized);
  t.atol = std::max(factor * out.ref_rms, static_cast<double>(std::numeric_limits<float>::min()));
  out.slice_rule = SliceBandRule::kResolve;
  out.rules_fired.push_back(fmt::format("scaled: atol = {:g} x rms(ref) {:.3g} = {:.3g}, rtol {:g} (relative to "
                                        "the output's magnitude; --atol sets a fixed band)",
                                        factor, out.ref_rms, t.atol, t.rtol));
}

// Calibrated mode: a multiple of the reference's own error against a second reference.
void ApplyCalibrated(ResolvedTolerance& out, const TensorMetrics& noise, double multiplier, DType dtype) {
  Tolerance& t = out.tolerance;
  const double rms = out.ref_rms;
  const double floor = kCalibrationFloor * Epsilon(dtype) * rms;
  t.atol = std::max({multiplier * noise.max_abs, floor, std::numeric_limits<double>::min()});
  t.rtol = 0;
  out.slice_rule = SliceBandRule::kResolve;
  out.rules_fired.push_back(fmt::format(
      "calibrated: {:g} x the reference's own error {:.3g} (floor {:g} x eps x rms(ref) = {:.3g}) -> atol {:.3g}, "
      "rtol 0",
      multiplier, noise.max_abs, kCalibrationFloor, floor, t.atol));
  if (rms > 0 && t.atol > 1e-2 * rms)
    out.warnings.push_back(fmt::format(
        "the reference's own error (max_abs {:.3g} against its second reference) is {:.2g}% of this output's "
        "rms {:.3g}: a fault smaller than that cannot be told from noise",
        noise.max_abs, 100 * noise.max_abs / rms, rms));
}

// Adaptive mode: probabilities get atol / axis length, near-constant outputs a band from their std.
void ApplyAdaptive(ResolvedTolerance& out, const Tensor& ref, const TensorMetrics& self, DType dtype) {
  Tolerance& t = out.tolerance;
  const double absmax = out.ref_absmax;
  if (self.ref_finite == self.count && self.ref_min >= 0 && self.ref_max <= 1) {
    if (auto axis = ProbabilityAxis(ref)) {
      const double scale = 1.0 / static_cast<double>(axis->second);
      t.atol *= scale;
      out.rules_fired.push_back(fmt::format(
          "adaptive: probabilities (in [0,1], sum 1 along axis {} of {}): atol scaled by 1/{} to {:g}", axis->first,
          axis->second, axis->second, t.atol));
      return;
    }
  }
  const double band = Band(t, absmax);
  if (absmax > 0 && self.ref_std <= band / 100) {
    t.atol = std::max(self.ref_std / 10, 4 * Epsilon(dtype) * absmax);
    t.rtol = 0;
    out.rules_fired.push_back(fmt::format(
        "adaptive: near-constant (std {:g} <= 1/100 of tolerance band {:g}): atol {:g}, rtol 0", self.ref_std, band,
        t.atol));
    return;
  }
  WarnIfWiderThanReference(out);
}

// The band at the reference's scale: what a cap bounds.
double BandAtScale(const Tolerance& t, double absmax, double rms) {
  if (t.decide_by == Statistic::kMax) return Band(t, absmax);
  if (t.decide_by == Statistic::kMean) return Band(t, rms);
  return t.atol;
}

// A rule's reference_fraction: the band at most that fraction of rms(ref).
void ApplyCap(ResolvedTolerance& out) {
  const double fraction = out.reference_fraction;
  Tolerance& t = out.tolerance;
  const double limit = std::max(fraction * out.ref_rms, static_cast<double>(std::numeric_limits<float>::min()));
  out.slice_rule = SliceBandRule::kCap;
  if (BandAtScale(t, out.ref_absmax, out.ref_rms) <= limit) return;
  t.atol = limit;
  if (t.decide_by == Statistic::kMax || t.decide_by == Statistic::kMean) t.rtol = 0;
  out.rules_fired.push_back(fmt::format(
      "capped by the reference: the band may not exceed {:g} x rms(ref) {:.3g}: atol {:.3g}, rtol {:g}", fraction,
      out.ref_rms, t.atol, t.rtol));
}

}  // namespace

void ApplyConditioningFloor(ResolvedTolerance& out, double spread) {
  Tolerance& t = out.tolerance;
  const double floor = kConditioningFactor * spread;
  // A band the user fixed (--atol, a rule's atol) is theirs: kept exact.
  if (out.slice_rule == SliceBandRule::kNone) return;
  if (!(floor > 0) || !std::isfinite(floor) || BandAtScale(t, out.ref_absmax, out.ref_rms) >= floor) return;
  t.atol = std::max(t.atol, floor);
  out.rules_fired.push_back(fmt::format(
      "conditioning: float32 moves this output by up to {:.3g} on this sample when its inputs move by one ulp "
      "(an ill-conditioned sample); a band below {:g} x that cannot decide: atol {:.3g}",
      spread, kConditioningFactor, t.atol));
}

Tolerance SliceCapBand(const ResolvedTolerance& whole, double slice_rms) {
  Tolerance t = whole.tolerance;
  if (t.decide_by == Statistic::kMax || t.decide_by == Statistic::kMean) {
    t.atol = BandAtScale(t, whole.ref_absmax, whole.ref_rms);
    t.rtol = 0;
  }
  const double limit =
      std::max(whole.reference_fraction * slice_rms, static_cast<double>(std::numeric_limits<float>::min()));
  t.atol = std::min(t.atol, limit);
  return t;
}

ResolvedTolerance Resolve(std::string_view name, const Tensor& ref, const TolerancePolicy& policy,
                          const TensorMetrics* noise, std::optional<DType> test_dtype,
                          const TensorMetrics* reference_statistics) {
  ResolvedTolerance out;
  out.mode = policy.mode;
  const DType dtype = ToleranceDType(ref.dtype(), test_dtype);
  const bool atol_set = ApplyRules(name, ref.dtype(), dtype, policy, out);
  if (!IsFloating(ref.dtype()) && !IsFloating(dtype)) return out;

  // Reference statistics for the mode rules and the warnings.
  const TensorMetrics self = reference_statistics != nullptr ? *reference_statistics
                                                             : ComputeMetrics(ref, ref, {}).value_or(TensorMetrics{});
  out.ref_absmax = std::max(std::fabs(self.ref_min), std::fabs(self.ref_max));
  out.ref_rms = std::sqrt(self.ref_std * self.ref_std + self.ref_mean * self.ref_mean);
  switch (out.mode) {
    case ToleranceMode::kFixed: WarnIfWiderThanReference(out); break;
    case ToleranceMode::kScaled: ApplyScaled(out, atol_set, dtype, policy.quantized); break;
    case ToleranceMode::kCalibrated:
      if (noise == nullptr) {
        out.rules_fired.push_back("calibrated: no second reference for this output");
        ApplyScaled(out, atol_set, dtype, policy.quantized);
      } else {
        ApplyCalibrated(out, *noise, policy.calibration_multiplier, dtype);
      }
      break;
    case ToleranceMode::kAdaptive: ApplyAdaptive(out, ref, self, dtype); break;
  }
  if (out.reference_fraction > 0) ApplyCap(out);
  return out;
}

std::string Judge(const TensorMetrics& m, const Tolerance& tol) {
  const int64_t nonfinite = m.nan_mismatch + m.inf_mismatch;
  const double absmax = std::max(std::fabs(m.ref_min), std::fabs(m.ref_max));
  switch (tol.decide_by) {
    case Statistic::kElementwise:
      if (m.mismatches == 0) return "";
      return fmt::format("{} of {} elements outside atol {:g} + rtol {:g}*|ref| ({} NaN/Inf), max_abs {:g}",
                         m.mismatches, m.count, tol.atol, tol.rtol, nonfinite, m.max_abs);
    case Statistic::kQuantile: {
      const auto allowed = static_cast<int64_t>(std::floor((1 - tol.quantile) * static_cast<double>(m.count)));
      if (m.mismatches <= allowed) return "";
      return fmt::format("{} elements outside tolerance, {} allowed by quantile {:g}", m.mismatches, allowed,
                         tol.quantile);
    }
    default: break;
  }
  if (nonfinite > 0) return fmt::format("{} NaN/Inf mismatches", nonfinite);
  if (tol.decide_by == Statistic::kMax) {
    const double limit = Band(tol, absmax);
    if (m.max_abs <= limit) return "";
    return fmt::format("max_abs {:g} > {:g} (atol + rtol*max|ref|)", m.max_abs, limit);
  }
  const double rms = std::sqrt(m.ref_std * m.ref_std + m.ref_mean * m.ref_mean);
  const double limit = Band(tol, rms);
  if (m.mean_abs <= limit) return "";
  return fmt::format("mean_abs {:g} > {:g} (atol + rtol*rms(ref))", m.mean_abs, limit);
}

}  // namespace parity
