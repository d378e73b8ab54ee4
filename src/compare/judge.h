// Judging one tensor: the one place parity decides whether a test tensor
// matches its reference. Every command that judges a tensor (compare, check,
// locate, baseline verify, align and the PyTorch comparison) calls
// JudgeTensor, so a tensor gets the same tolerance, the same verdict and the
// same score wherever it is judged.
//
// The error score (ErrorScore, JudgedTensor::score, the `score` of locate's
// reports and the `error_ratio` of check's layer curve):
//
//     score = max_abs / (atol + rtol * max|ref|)
//
// with max|ref| over the reference's finite elements. 1 is the edge of the
// tolerance band: a score <= 1 passes `decide_by = max`, a score > 1 fails it.
// NaN/Inf mismatches score +inf; a zero band scores 0 for identical tensors
// and +inf otherwise. The score ranks tensors; the verdict is Judge's
// (tolerance.h: decide_by), which for the element-wise default can fail a
// tensor whose score is below 1 (an element far from max|ref| outside its own
// band) and never passes one with NaN/Inf mismatches.
#pragma once

#include <string>
#include <string_view>

#include "compare/band.h"
#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

// max|x| over the finite elements of a numeric tensor (0 for none).
double MaxAbsOf(const Tensor& t);

// max_abs / (atol + rtol * max|ref|); +inf on NaN/Inf mismatches (above).
double ErrorScore(const TensorMetrics& m, const Tolerance& tol);

struct JudgeOptions {
  // Metrics of a second reference against the first (calibrated mode).
  const TensorMetrics* noise = nullptr;
  // That second reference itself: a tensor judged slice by slice calibrates
  // each slice on its own slice of it (without it, the slices fall back to
  // the scaled band, as Resolve does without noise).
  const Tensor* noise_tensor = nullptr;
  // Judge a reference that mixes scales along an axis slice by slice
  // (compare/slice_bands.h) when its band follows the reference
  // (ResolvedTolerance::slice_rule). CompareSets sets it for the outputs it
  // compares; the tensors inside a graph (locate) keep one band each.
  bool slice_bands = false;
  int threads = 0;  // MetricsOptions::threads
  // The conditioning spread of this output (f(x') - f(x), x' the inputs one
  // ulp away; tolerance.h ApplyConditioningFloor): its max |.| floors the
  // band, and each slice's floors that slice's. Null: none measured.
  const Tensor* conditioning = nullptr;
};

struct JudgedTensor {
  TensorMetrics metrics;         // unset when the shapes differ or a string meets a number
  ResolvedTolerance tolerance;
  double score = 0;              // ErrorScore
  std::string reason;            // why it failed; "" on pass
  bool passed() const { return reason.empty(); }
};

// Judges `test` against `ref` under `policy`, resolved for output `name` from
// the reference's statistics (one pass over both tensors). A test of another
// dtype (a float16-converted model against its float32 reference) is judged
// by the looser of the two dtypes' defaults (Resolve's test_dtype).
// A shape difference, or a string tensor against a numeric one, is a failed
// verdict (score +inf) with the reason "shape [..] differs from the
// reference's [..]" / "dtype .. differs from the reference's ..": callers
// that word those for their reader check them first.
// With options.slice_bands, a floating reference that mixes scales along an
// axis (FindMixedScaleAxis) under a band that follows the reference is judged
// slice by slice (JudgeSlices): the verdict, the score and
// metrics.mismatches are then the slices' (each slice against its own band;
// max_abs and the other metrics stay the whole tensor's), and
// tolerance.slices says which band judged which part.
// Errors: only what ComputeMetrics refuses (invalid argument), with the
// context "tensor 'NAME'". Thread-compatible.
Result<JudgedTensor> JudgeTensor(std::string_view name, const Tensor& ref, const Tensor& test,
                                 const TolerancePolicy& policy, const JudgeOptions& options = {});

// Judges `j` (already judged as a whole: its tolerance resolved for the
// whole reference) again slice by slice along `axis` (FindMixedScaleAxis of
// `ref`): each slice with its own band (ResolvedTolerance::slice_rule), a
// slice that is exactly zero with the band of the smallest nonzero one.
// Replaces j.reason, j.score and j.metrics.mismatches; sets
// j.tolerance.slices and adds the line that says so to its rules_fired.
struct MixedScaleAxis;
Status JudgeSlices(std::string_view name, const Tensor& ref, const Tensor& test, const TolerancePolicy& policy,
                   const JudgeOptions& options, const MixedScaleAxis& axis, JudgedTensor& j);

// The quantization-step view of a judged tensor (issue 25; docs/quantized.md).
// A derived model (int8 QDQ, fp16) cannot match its float reference to
// float32's tolerance: its error is counted in steps of the grid the derived
// tensor lives on, and its loss as SQNR (TensorMetrics::snr_db).
//
//   int8/uint8 QDQ: step = the tensor's QuantizeLinear scale (the largest
//                   per-channel scale for per-axis weights);
//   fp16:           step = the spacing of float16 numbers at max|ref|,
//                   2^(floor(log2 max|ref|) - 10) (unit roundoff 2^-11 is
//                   half of it), at least the smallest subnormal 2^-24.
//
// max_steps = max_abs / step; +inf on NaN/Inf mismatches or a step <= 0 with
// a nonzero error, 0 for identical tensors. Rounding one value to the grid
// costs at most 0.5 step; rounding ties resolved the other way cost 1.
double Float16Step(double max_abs_ref);
double MaxSteps(const TensorMetrics& m, double step);

// The tolerance of a derived tensor whose grid is `step`, allowing
// `steps` of it: atol = steps * step, rtol = 0.
inline Tolerance StepTolerance(double step, double steps) { return {.atol = steps * step, .rtol = 0}; }

}  // namespace parity
