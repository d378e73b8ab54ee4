// float32's statistics for the baseline manifest, in SSE2 vectors.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "engine/baseline/baseline_internal.h"

namespace parity::baseline_internal {

namespace {

// GCC's vector extensions (also Clang's): SSE2 on any x86-64, no intrinsics.
using V4f = float __attribute__((vector_size(16)));
using V2d = double __attribute__((vector_size(16)));

V4f Load(const float* p) {
  V4f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

bool Float32FiniteStats(std::span<const float> x, TensorStats& s) {
  // Eight values a step in vectors: partial sums in double, bounds and a
  // non-finite marker in float, no branch (resnet50's 26 M values: the
  // scalar loop with a branch and one serial double sum per element was a
  // tenth of baseline's CPU). GCC left the plain loop scalar even so.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  V2d sum[4] = {}, sum_sq[4] = {};
  V4f lo[2] = {{kInf, kInf, kInf, kInf}, {kInf, kInf, kInf, kInf}};
  V4f hi[2] = {-lo[0], -lo[0]};
  V4f nonfinite[2] = {};
  const float* p = x.data();
  const size_t whole = x.size() - x.size() % 8;
  for (size_t i = 0; i < whole; i += 8) {
    for (int h = 0; h < 2; ++h) {
      const V4f v = Load(p + i + 4 * h);
      lo[h] = v < lo[h] ? v : lo[h];
      hi[h] = v > hi[h] ? v : hi[h];
      nonfinite[h] += v * 0.0f;  // NaN for a NaN or an infinity, 0 otherwise
      const V2d a = {v[0], v[1]}, b = {v[2], v[3]};
      sum[2 * h] += a;
      sum[2 * h + 1] += b;
      sum_sq[2 * h] += a * a;
      sum_sq[2 * h + 1] += b * b;
    }
  }
  double total = 0, total_sq = 0;
  float low = kInf, high = -kInf;
  bool finite = true;
  for (int k = 0; k < 4; ++k) {
    total += sum[k][0] + sum[k][1];
    total_sq += sum_sq[k][0] + sum_sq[k][1];
  }
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 4; ++l) {
      low = std::min(low, lo[h][l]);
      high = std::max(high, hi[h][l]);
      finite = finite && nonfinite[h][l] == 0.0f;
    }
  for (size_t i = whole; i < x.size(); ++i) {
    const float v = p[i];
    finite = finite && std::isfinite(v);
    total += v;
    total_sq += static_cast<double>(v) * v;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  if (!finite) return false;
  SetFiniteStats(low, high, total, total_sq, static_cast<int64_t>(x.size()), s);
  return true;
}

}  // namespace parity::baseline_internal
