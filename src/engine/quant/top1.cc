#include "engine/quant/top1.h"

#include <algorithm>
#include <array>

#include "engine/quant/detections.h"

namespace parity {

namespace {

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Caches and hidden states: outputs whose last axis is not a set of classes.
bool NotAClassAxis(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.starts_with("present") || lower.starts_with("past")) return true;
  static constexpr std::array<std::string_view, 5> kStates = {"hidden", "pooler", "embed", "state", "feature"};
  return std::any_of(kStates.begin(), kStates.end(), [&](std::string_view s) { return Contains(lower, s); });
}

}  // namespace

int64_t ArgMax(const Tensor& t, int64_t begin, int64_t n, int64_t stride) {
  int64_t best = 0;
  double best_value = t.GetAsDouble(begin);
  for (int64_t i = 1; i < n; ++i) {
    const double v = t.GetAsDouble(begin + i * stride);
    if (v > best_value || (best_value != best_value && v == v)) {  // a NaN never wins over a number
      best = i;
      best_value = v;
    }
  }
  return best;
}

OutputTask TaskOf(std::string_view name, const Tensor& t) {
  if (!IsFloating(t.dtype()) || t.rank() < 1 || NotAClassAxis(name)) return OutputTask::kNone;
  if (DetectorLayoutOf(t)) return OutputTask::kDetector;
  const bool logits = t.rank() == 3 && Contains(name, "logits");
  if ((t.rank() <= 2 || logits) && t.shape().back() >= 2) return OutputTask::kClassifier;
  return OutputTask::kNone;
}

void AddTop1(const TensorSet& reference, const TensorSet& test, std::vector<Top1Agreement>& tallies) {
  for (const auto& [name, ref] : reference) {
    const Tensor* out = test.Find(name);
    // An empty output has no rows: it says nothing of top-1 (it was once
    // counted as a sample with "0/0 rows (100.0%)").
    if (out == nullptr || out->shape() != ref.shape() || !IsFloating(out->dtype()) || ref.size() == 0 ||
        TaskOf(name, ref) != OutputTask::kClassifier)
      continue;
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
