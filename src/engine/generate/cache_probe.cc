#include "engine/generate/cache_probe.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype.h"

namespace parity {
namespace {

// The cache as [rows, outer, length, inner] (outer: the axes between the
// row and the positions; inner: those after them), in elements.
struct Layout {
  int64_t rows = 0, outer = 1, length = 0, inner = 1;
};

Layout LayoutOf(const Tensor& t) {
  Layout l;
  const int axis = CacheAxis(t);
  if (axis < 0) return l;
  l.rows = t.shape()[0];
  l.length = t.shape()[axis];
  for (int a = 1; a < axis; ++a) l.outer *= t.shape()[a];
  for (int a = axis + 1; a < t.rank(); ++a) l.inner *= t.shape()[a];
  return l;
}

}  // namespace

int CacheAxis(const Tensor& cache) { return cache.rank() >= 3 ? static_cast<int>(cache.rank()) - 2 : -1; }

std::vector<std::vector<int64_t>> ChangedPositions(const Tensor& before, const Tensor& after) {
  const Layout l = LayoutOf(after);
  std::vector<std::vector<int64_t>> changed(static_cast<size_t>(l.rows));
  if (before.shape() != after.shape() || before.dtype() != after.dtype() || l.rows == 0) return changed;
  const size_t span = static_cast<size_t>(l.inner) * DTypeSize(after.dtype());
  for (int64_t b = 0; b < l.rows; ++b)
    for (int64_t j = 0; j < l.length; ++j)
      for (int64_t o = 0; o < l.outer; ++o) {
        const size_t at = ((b * l.outer + o) * l.length + j) * span;
        if (std::memcmp(before.data() + at, after.data() + at, span) != 0) {
          changed[b].push_back(j);
          break;
        }
      }
  return changed;
}

Result<Tensor> FillFrom(const Tensor& cache, const std::vector<int64_t>& from, double value) {
  const DType d = cache.dtype();
  if (d != DType::kFloat32 && d != DType::kFloat16 && d != DType::kBFloat16)
    return Unsupported(fmt::format("a cache of dtype {} (float32, float16 or bfloat16 only)", DTypeName(d)));
  const Layout l = LayoutOf(cache);
  Tensor out = cache.Copy();
  const float f = static_cast<float>(value);
  const uint16_t h = d == DType::kFloat16 ? FloatToHalf(f) : FloatToBFloat16(f);
  for (int64_t b = 0; b < l.rows && b < static_cast<int64_t>(from.size()); ++b)
    for (int64_t o = 0; o < l.outer; ++o)
      for (int64_t j = std::max<int64_t>(from[b], 0); j < l.length; ++j) {
        const int64_t at = ((b * l.outer + o) * l.length + j) * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) {
          if (d == DType::kFloat32)
            out.mutable_view<float>()[at + i] = f;
          else
            out.mutable_view<uint16_t>()[at + i] = h;
        }
      }
  return out;
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  double worst = 0;
  const int64_t n = std::min(a.size(), b.size());
  for (int64_t i = 0; i < n; ++i) {
    const double x = a.GetAsDouble(i), y = b.GetAsDouble(i);
    if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::infinity();
    if (!std::isnan(x)) worst = std::max(worst, std::abs(x - y));
  }
  return worst;
}

std::string PositionList(const std::vector<int64_t>& p) {
  if (p.size() > 2 && p.back() - p.front() + 1 == static_cast<int64_t>(p.size()))
    return fmt::format("{}..{}", p.front(), p.back());
  return fmt::format("{}", fmt::join(p, ", "));
}

}  // namespace parity
