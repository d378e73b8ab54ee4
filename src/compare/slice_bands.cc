#include "compare/slice_bands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace parity {
namespace {

struct Layout {
  int64_t outer = 1, length = 1, inner = 1;
};

Layout LayoutOf(const Shape& shape, int axis) {
  Layout l;
  l.length = shape[axis];
  for (int k = 0; k < axis; ++k) l.outer *= shape[k];
  for (size_t k = axis + 1; k < shape.size(); ++k) l.inner *= shape[k];
  return l;
}

// The rms of each slice along the axis from up to `per_slice` evenly spaced
// elements of it (every element when per_slice <= 0).
std::vector<double> SliceRms(const Tensor& t, const Layout& l, int64_t per_slice) {
  const int64_t n = l.outer * l.inner;
  const int64_t stride = per_slice > 0 && n > per_slice ? n / per_slice : 1;
  std::vector<double> rms(l.length, 0.0);
  for (int64_t j = 0; j < l.length; ++j) {
    double sum = 0;
    int64_t used = 0;
    for (int64_t m = 0; m < n; m += stride) {
      const int64_t o = m / l.inner, k = m % l.inner;
      const double v = t.GetAsDouble((o * l.length + j) * l.inner + k);
      if (!std::isfinite(v)) continue;
      sum += v * v;
      ++used;
    }
    rms[j] = used > 0 ? std::sqrt(sum / static_cast<double>(used)) : 0.0;
  }
  return rms;
}

// Runs of consecutive indices in `indices` (sorted).
int64_t Runs(const std::vector<int64_t>& indices) {
  int64_t runs = 0;
  for (size_t i = 0; i < indices.size(); ++i) runs += i == 0 || indices[i] != indices[i - 1] + 1;
  return runs;
}

}  // namespace

bool LargestScaleIsAPart(const std::vector<double>& rms) {
  const auto groups = ScaleGroups(rms);
  const std::vector<int64_t>* top = nullptr;
  double top_rms = -1;
  for (const auto& g : groups)
    for (int64_t k : g)
      if (rms[k] > top_rms) top_rms = rms[k], top = &g;
  return top != nullptr && Runs(*top) <= kMaxPartRuns;
}

double LargestScaleGap(const std::vector<double>& rms) {
  std::vector<double> nonzero;
  for (double r : rms)
    if (r > 0 && std::isfinite(r)) nonzero.push_back(r);
  if (nonzero.size() < 2) return 0;
  std::sort(nonzero.begin(), nonzero.end());
  double gap = 0;
  for (size_t i = 1; i < nonzero.size(); ++i) gap = std::max(gap, nonzero[i] / nonzero[i - 1]);
  return gap;
}

std::optional<MixedScaleAxis> FindMixedScaleAxis(const Tensor& ref) {
  if (!IsFloating(ref.dtype()) || ref.size() == 0) return std::nullopt;
  std::optional<MixedScaleAxis> best;
  for (int axis = 0; axis < static_cast<int>(ref.rank()); ++axis) {
    const Layout l = LayoutOf(ref.shape(), axis);
    if (l.length < 2 || l.length > kMaxSlices || l.outer * l.inner < kMinSliceElements) continue;
    if (LargestScaleGap(SliceRms(ref, l, kScreenSamples)) < kMixedScaleGap / 10) continue;
    std::vector<double> rms = SliceRms(ref, l, 0);
    const double gap = LargestScaleGap(rms);
    if (gap < kMixedScaleGap || (best && gap <= best->gap) || !LargestScaleIsAPart(rms)) continue;
    best = MixedScaleAxis{.axis = axis, .slice_rms = std::move(rms), .gap = gap};
  }
  return best;
}

Tensor SliceAlong(const Tensor& t, int axis, int64_t index) {
  const Layout l = LayoutOf(t.shape(), axis);
  Tensor out(t.dtype(), Shape{l.outer, l.inner});
  const size_t block = static_cast<size_t>(l.inner) * DTypeSize(t.dtype());
  for (int64_t o = 0; o < l.outer; ++o)
    std::memcpy(out.mutable_data() + o * block, t.data() + (o * l.length + index) * block, block);
  return out;
}

std::vector<std::vector<int64_t>> ScaleGroups(const std::vector<double>& slice_rms) {
  std::vector<int64_t> order(slice_rms.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slice_rms[a] < slice_rms[b]; });
  std::vector<std::vector<int64_t>> groups;
  for (size_t i = 0; i < order.size(); ++i) {
    const double r = slice_rms[order[i]];
    const double prev = i > 0 ? slice_rms[order[i - 1]] : -1;
    if (i == 0 || (prev == 0) != (r == 0) || (prev > 0 && r >= kMixedScaleGap * prev)) groups.emplace_back();
    groups.back().push_back(order[i]);
  }
  for (auto& g : groups) std::sort(g.begin(), g.end());
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return groups;
}

double MachineEpsilon(DType t) {
  switch (t) {
    case DType::kFloat16: return 0x1p-10;
    case DType::kBFloat16: return 0x1p-7;
    case DType::kFloat64: return std::numeric_limits<double>::epsilon();
    case DType::kFloat32: return std::numeric_limits<float>::epsilon();
    default: return 0;
  }
}

double SliceFloor(const Tensor& slice, double rms, DType dtype, double largest_rms) {
  bool unit = true;
  for (int64_t i = 0; i < slice.size() && unit; ++i) {
    const double v = slice.GetAsDouble(i);
    unit = !std::isfinite(v) || (v >= 0 && v <= 1);
  }
  return kSliceFloorUlps * MachineEpsilon(dtype) * std::max(unit ? 1.0 : rms, kSliceResolution * largest_rms);
}

std::string IndexRanges(const std::vector<int64_t>& indices) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? fmt::format("{}", indices[i]) : fmt::format("{}-{}", indices[i], indices[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace parity
