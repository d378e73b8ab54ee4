// Outputs that mix scales (issue 40, docs/compare.md "Outputs that mix
// scales"): a detector's output concatenates boxes in pixels (<= 640) with
// class scores (<= 1e-3 before training) along one axis. One band for the
// whole tensor follows its rms, which the boxes set: it is wider than every
// score, and any change of the scores passes. Such a tensor is judged slice
// by slice along that axis, each slice with a band from its own reference
// values (compare/judge.h JudgeTensor, JudgeOptions::slice_bands).
//
// An axis mixes scales when, over the slices along it (every index of that
// axis, the other axes flattened), the rms of the reference's finite values,
// sorted, jump by at least kMixedScaleGap between two neighbours that are
// both nonzero (slices that are exactly zero have no scale and are left
// out), and the slices of the largest scale are one part of it
// (LargestScaleIsAPart). Only axes of 2..kMaxSlices slices of at least kMinSliceElements
// elements each are considered; among several, the one with the largest jump
// wins. Candidates are screened on up to kScreenSamples evenly spaced
// elements per slice (a jump of kMixedScaleGap / 10 there), then confirmed
// on every element: the screen costs no pass over a tensor that does not mix
// scales.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

inline constexpr double kMixedScaleGap = 100;
inline constexpr int64_t kMinSliceElements = 16;
inline constexpr int64_t kMaxSlices = 4096;
inline constexpr int64_t kScreenSamples = 64;
inline constexpr int64_t kMaxPartRuns = 2;

// The smallest band of a slice: kSliceFloorUlps x eps(dtype) x its unit,
// where the unit is 1 for a slice whose reference lies in [0, 1] (scores,
// probabilities: computed as 1 / (1 + e^-x) or e^x / sum, at the scale of 1,
// so their float error is absolute, ~eps, however small the value: ORT's
// fused and unfused runs of a sigmoid score of 1e-4 differ by 2^-23, as do
// ORT and PyTorch) and the slice's rms otherwise.
inline constexpr double kSliceFloorUlps = 8;
// A slice more than 1e5 times smaller than the tensor's largest slice (a dead
// channel of a raw detection map: rms 1e-23 beside 4e3) holds nothing float32
// resolves in a computation at the largest slice's scale: its unit is taken as
// no less than kSliceResolution x that rms (the zoo's healthy dynamo YOLOv8n
// failed at 1e-22 on such channels). Scores of 1e-4 beside boxes of 300 keep a
// floor of ~3e-9, far below a 1% change of them.
inline constexpr double kSliceResolution = 1e-5;

struct MixedScaleAxis {
  int axis = -1;
  std::vector<double> slice_rms;  // rms of each slice's finite reference values (0: none, or all zero)
  double gap = 0;                 // the largest ratio between neighbouring nonzero slice rms, sorted
};

// The axis of `ref` that mixes scales (above), or nullopt: not floating, or
// no axis qualifies. Thread-safe (reads only).
std::optional<MixedScaleAxis> FindMixedScaleAxis(const Tensor& ref);

// Whether the slices of the largest scale (ScaleGroups' group holding the
// largest rms) form at most kMaxPartRuns runs of consecutive indices: parts
// concatenated along the axis (a detector's 4 box rows before its scores;
// a cache's past before the new tokens), not a feature map whose scattered
// dead or near-dead channels (SiLU of large negative values, rms 1e-7
// beside 300) fall 100x below the rest: their float error follows the
// pre-activation's scale, not their own, and judging them by their own rms
// failed healthy YOLOv8n exports on 1 element in 1600.
bool LargestScaleIsAPart(const std::vector<double>& rms);

// The largest ratio between neighbouring nonzero values of `rms`, sorted; 0
// with fewer than two nonzero values.
double LargestScaleGap(const std::vector<double>& rms);

// Slice `index` of `t` along `axis` as a tensor of shape [outer, inner] (the
// axes before and after it flattened, C order kept). Preconditions: t is not
// a string tensor; 0 <= axis < rank; 0 <= index < shape[axis].
Tensor SliceAlong(const Tensor& t, int axis, int64_t index);

// The slices grouped by scale for a report: sorted by rms, a new group
// starts where the rms jumps by at least kMixedScaleGap, or leaves zero.
// Each group lists its slice indices in increasing order; groups are ordered
// by their first index.
std::vector<std::vector<int64_t>> ScaleGroups(const std::vector<double>& slice_rms);

// The spacing of the dtype's numbers at 1 (float32 2^-23, float16 2^-10,
// bfloat16 2^-7, float64 2^-52); 0 for integers, bools and strings.
double MachineEpsilon(DType dtype);

// The floor above for slice `slice` of rms `rms` judged in `dtype`.
double SliceFloor(const Tensor& slice, double rms, DType dtype, double largest_rms = 0);

// "0-3, 7, 9-11" for sorted indices.
std::string IndexRanges(const std::vector<int64_t>& indices);

}  // namespace parity
