#include "compare/set_valued.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "compare/judge.h"

namespace parity {
namespace {

// The row axis of an output: 0, or 1 after a leading batch of 1.
int RowAxis(const Tensor& t) { return t.rank() >= 2 && t.shape()[0] == 1 && t.rank() > 2 ? 1 : 0; }

struct Rows {
  int64_t count = 0;
  std::vector<const Tensor*> parts;  // one per group output
  std::vector<int64_t> width;        // elements per row of each part
};

Result<Rows> RowsOf(const SetValuedGroup& g, const TensorSet& set, const char* side) {
  Rows r;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const Tensor* t = set.Find(g.outputs[k]);
    if (t == nullptr) return InvalidArgument(fmt::format("the {} has no output '{}'", side, g.outputs[k]));
    if (t->dtype() == DType::kString || t->rank() == 0)
      return InvalidArgument(fmt::format("'{}' has no rows to match", g.outputs[k]));
    const int axis = RowAxis(*t);
    const int64_t n = t->shape()[axis];
    if (k == 0) r.count = n;
    if (n != r.count)
      return InvalidArgument(
          fmt::format("the {}'s outputs {} do not share a row count", side, fmt::join(g.outputs, ", ")));
    r.parts.push_back(t);
    r.width.push_back(n == 0 ? 0 : t->size() / n);
  }
  return r;
}

double At(const Rows& r, size_t part, int64_t row, int64_t j) {
  return r.parts[part]->GetAsDouble(row * r.width[part] + j);
}

double Iou(const Rows& a, int64_t i, const Rows& b, int64_t j, size_t part) {
  auto box = [&](const Rows& r, int64_t row, double v[4]) {
    for (int k = 0; k < 4; ++k) v[k] = At(r, part, row, k);
  };
  double p[4], q[4];
  box(a, i, p);
  box(b, j, q);
  // Corners (x1, y1, x2, y2); a box given as centre and size gives the same
  // IoU ordering for the near-identical boxes matched here only loosely,
  // so both forms are read as corners after sorting each pair.
  auto area = [](const double v[4]) {
    return std::max(0.0, std::fabs(v[2] - v[0])) * std::max(0.0, std::fabs(v[3] - v[1]));
  };
  const double ix = std::max(0.0, std::min(std::max(p[0], p[2]), std::max(q[0], q[2])) -
                                      std::max(std::min(p[0], p[2]), std::min(q[0], q[2])));
  const double iy = std::max(0.0, std::min(std::max(p[1], p[3]), std::max(q[1], q[3])) -
                                      std::max(std::min(p[1], p[3]), std::min(q[1], q[3])));
  const double inter = ix * iy, uni = area(p) + area(q) - inter;
  return uni > 0 ? inter / uni : (inter == 0 && std::equal(p, p + 4, q) ? 1.0 : 0.0);
}

// How far test row j is from reference row i, in bands (the worst part);
// nullopt when an integer part differs or a float part leaves its band.
std::optional<double> Distance(const SetValuedGroup& g, const Rows& ref, int64_t i, const Rows& test,
                               int64_t j, const std::vector<Tolerance>& bands) {
  double worst = 0;
  for (size_t p = 0; p < ref.parts.size(); ++p) {
    if (ref.width[p] != test.width[p]) return std::nullopt;
    const bool floating = IsFloating(ref.parts[p]->dtype());
    if (g.outputs[p] == g.boxes && ref.width[p] == 4 && Iou(ref, i, test, j, p) < kMinIou)
      return std::nullopt;
    for (int64_t k = 0; k < ref.width[p]; ++k) {
      const double r = At(ref, p, i, k), t = At(test, p, j, k);
      if (!floating) {
        if (r != t) return std::nullopt;
        continue;
      }
      if (std::isnan(r) || std::isnan(t)) {
        if (std::isnan(r) != std::isnan(t)) return std::nullopt;
        continue;
      }
      const double band = Band(bands[p], std::fabs(r)), d = std::fabs(t - r);
      if (d > band) return std::nullopt;
      worst = std::max(worst, band > 0 ? d / band : 0.0);
    }
  }
  return worst;
}

std::string RowText(const SetValuedGroup& g, const Rows& r, int64_t row) {
  std::vector<std::string> parts;
  for (size_t p = 0; p < r.parts.size(); ++p) {
    std::vector<std::string> v;
    for (int64_t k = 0; k < std::min<int64_t>(r.width[p], 8); ++k)
      v.push_back(fmt::format("{:.4g}", At(r, p, row, k)));
    const std::string values = r.width[p] == 1 ? v[0] : fmt::format("[{}]", fmt::join(v, ", "));
    parts.push_back(fmt::format("{} {}", g.outputs[p], values));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Row indices by score, highest first (in order without a score output).
std::vector<int64_t> ByScore(const SetValuedGroup& g, const Rows& r) {
  std::vector<int64_t> order(r.count);
  std::iota(order.begin(), order.end(), 0);
  auto it = std::find(g.outputs.begin(), g.outputs.end(), g.score);
  if (it == g.outputs.end()) return order;
  const size_t p = it - g.outputs.begin();
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return At(r, p, a, 0) > At(r, p, b, 0); });
  return order;
}

}  // namespace

std::string SetMatch::Describe() const {
  std::string s = fmt::format("matched as a set: {} of {} reference rows ({} test rows), index tolerance {}",
                              matched, reference_rows, test_rows, index_tolerance);
  if (!unmatched.empty()) s += fmt::format("; unmatched: {}", fmt::join(unmatched, "; "));
  return s;
}

Result<SetMatch> MatchRows(const SetValuedGroup& g, const TensorSet& reference, const TensorSet& test,
                           const std::vector<std::pair<std::string, Tolerance>>& given) {
  PARITY_ASSIGN_OR_RETURN(Rows ref, RowsOf(g, reference, "reference"));
  PARITY_ASSIGN_OR_RETURN(Rows tst, RowsOf(g, test, "test"));
  std::vector<Tolerance> bands;
  for (size_t p = 0; p < g.outputs.size(); ++p) {
    auto it =
        std::find_if(given.begin(), given.end(), [&](const auto& b) { return b.first == g.outputs[p]; });
    bands.push_back(it != given.end() ? it->second
                                      : Resolve(g.outputs[p], *ref.parts[p], TolerancePolicy{}).tolerance);
  }
  SetMatch m{.reference_rows = ref.count, .test_rows = tst.count};
  m.index_tolerance = std::max<int64_t>(1, std::max(ref.count, tst.count) / 100);
  const std::vector<int64_t> ref_order = ByScore(g, ref), test_order = ByScore(g, tst);
  std::vector<bool> taken(tst.count, false), matched(ref.count, false);
  for (int64_t i : ref_order) {
    std::optional<int64_t> best;
    double best_d = 0;
    for (int64_t j : test_order) {
      if (taken[j]) continue;
      auto d = Distance(g, ref, i, tst, j, bands);
      if (d && (!best || *d < best_d)) best = j, best_d = *d;
    }
    if (!best) continue;
    taken[*best] = matched[i] = true;
    ++m.matched;
  }
  // The unmatched rows, each tolerated only among the lowest-scored ones.
  auto unmatched = [&](const Rows& r, const std::vector<int64_t>& order, const std::vector<bool>& used,
                       const char* side, bool& at_edge) {
    int64_t count = 0;
    for (size_t rank = 0; rank < order.size(); ++rank) {
      if (used[order[rank]]) continue;
      ++count;
      const bool edge = static_cast<int64_t>(order.size() - rank) <= m.index_tolerance;
      at_edge = at_edge && edge;
      if (m.unmatched.size() < 6)
        m.unmatched.push_back(fmt::format(
            "{} row {} ({}): {}", side, order[rank],
            edge ? std::string("among the lowest-scored") : fmt::format("rank {} of {}", rank + 1, order.size()),
            RowText(g, r, order[rank])));
    }
    return count;
  };
  bool at_edge = true;
  const int64_t missing = unmatched(ref, ref_order, matched, "reference", at_edge);
  const int64_t extra = unmatched(tst, test_order, taken, "test", at_edge);
  m.passed = at_edge && missing <= m.index_tolerance && extra <= m.index_tolerance;
  return m;
}

}  // namespace parity
