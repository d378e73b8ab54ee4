#include "compare/judge.h"

#include "compare/band.h"

#include "compare/slice_bands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace parity {

double ErrorScore(const TensorMetrics& m, const Tolerance& tol) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (m.nan_mismatch > 0 || m.inf_mismatch > 0) return kInf;
  const double band = Band(tol, std::max(std::fabs(m.ref_min), std::fabs(m.ref_max)));
  if (band <= 0) return m.max_abs > 0 ? kInf : 0.0;
  return m.max_abs / band;
}

double MaxAbsOf(const Tensor& t) {
  if (t.dtype() == DType::kString) return 0;
  double m = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = std::fabs(t.GetAsDouble(i));
    if (std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

double Float16Step(double max_abs_ref) {
  constexpr double kSmallest = 5.9604644775390625e-08;  // 2^-24, the smallest fp16 subnormal
  if (!(max_abs_ref > 0) || !std::isfinite(max_abs_ref)) return kSmallest;
  return std::max(kSmallest, std::ldexp(1.0, std::ilogb(max_abs_ref) - 10));
}

double MaxSteps(const TensorMetrics& m, double step) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (m.nan_mismatch > 0 || m.inf_mismatch > 0) return kInf;
  if (m.max_abs == 0) return 0;
  return step > 0 ? m.max_abs / step : kInf;
}

Result<JudgedTensor> JudgeTensor(std::string_view name, const Tensor& ref, const Tensor& test,
                                 const TolerancePolicy& policy, const JudgeOptions& options) {
  JudgedTensor j;
  if (ref.shape() != test.shape()) {
    j.reason = fmt::format("shape {} differs from the reference's {}", ShapeToString(test.shape()),
                           ShapeToString(ref.shape()));
    j.score = std::numeric_limits<double>::infinity();
    return j;
  }
  if ((ref.dtype() == DType::kString) != (test.dtype() == DType::kString)) {
    j.reason = fmt::format("dtype {} differs from the reference's {}", DTypeName(test.dtype()),
                           DTypeName(ref.dtype()));
    j.score = std::numeric_limits<double>::infinity();
    return j;
  }
  // The tolerance follows the reference's statistics, which the comparison
  // pass computes on the way (no pass of its own over the reference).
  MetricsOptions metrics_options{.threads = options.threads};
  metrics_options.band_from_reference = [&](const TensorMetrics& stats) {
    j.tolerance = Resolve(name, ref, policy, options.noise, test.dtype(), &stats);
    if (options.conditioning != nullptr && options.conditioning->shape() == ref.shape())
      ApplyConditioningFloor(j.tolerance, MaxAbsOf(*options.conditioning));
    return MismatchBand{j.tolerance.tolerance.atol, j.tolerance.tolerance.rtol};
  };
  PARITY_ASSIGN_OR_RETURN(j.metrics, WithContext(ComputeMetrics(ref, test, metrics_options),
                                                 fmt::format("tensor '{}'", name)));
  j.reason = Judge(j.metrics, j.tolerance.tolerance);
  j.score = ErrorScore(j.metrics, j.tolerance.tolerance);
  if (options.slice_bands && j.tolerance.slice_rule != SliceBandRule::kNone && IsFloating(ref.dtype()) &&
      IsFloating(test.dtype())) {
    if (auto axis = FindMixedScaleAxis(ref))
      PARITY_RETURN_IF_ERROR(WithContext(JudgeSlices(name, ref, test, policy, options, *axis, j),
                                         fmt::format("tensor '{}'", name)));
  }
  return j;
}

}  // namespace parity
