#include "engine/quant/top1.h"

#include <algorithm>

namespace parity {

namespace {

int64_t ArgMax(const Tensor& t, int64_t begin, int64_t n) {
  int64_t best = 0;
  double best_value = t.GetAsDouble(begin);
  for (int64_t i = 1; i < n; ++i) {
    const double v = t.GetAsDouble(begin + i);
    if (v > best_value || (best_value != best_value && v == v)) {  // a NaN never wins over a number
      best = i;
      best_value = v;
    }
  }
  return best;
}

}  // namespace

bool IsClassifierLike(const Tensor& t) {
  return IsFloating(t.dtype()) && t.rank() >= 1 && t.shape().back() >= 2;
}

void AddTop1(const TensorSet& reference, const TensorSet& test, std::vector<Top1Agreement>& tallies) {
  for (const auto& [name, ref] : reference) {
    const Tensor* out = test.Find(name);
    if (out == nullptr || out->shape() != ref.shape() || !IsClassifierLike(ref) || !IsClassifierLike(*out)) continue;
    auto it = std::find_if(tallies.begin(), tallies.end(), [&](const Top1Agreement& a) { return a.output == name; });
    if (it == tallies.end()) it = tallies.insert(tallies.end(), Top1Agreement{.output = name});
    const int64_t classes = ref.shape().back();
    for (int64_t row = 0; row < ref.size() / classes; ++row) {
      ++it->rows;
      it->agree += ArgMax(ref, row * classes, classes) == ArgMax(*out, row * classes, classes);
    }
    ++it->samples;
  }
}

}  // namespace parity
