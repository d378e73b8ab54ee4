#include "engine/quant/detections.h"

#include <algorithm>
#include <cmath>

#include "engine/quant/top1.h"

namespace parity {

namespace {

// Whether the values of rows [from, to) along `axis` (of 3) lie in [0, 1].
bool RowsInUnit(const Tensor& t, int axis, int64_t from, int64_t to) {
  const Shape& s = t.shape();
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t row = axis == 1 ? (i / s[2]) % s[1] : i % s[2];
    if (row < from || row >= to) continue;
    const double v = t.GetAsDouble(i);
    if (!(v >= 0 && v <= 1)) return false;
  }
  return true;
}

// Element index of class c (c = -4..classes-1 counts the box rows) of anchor a in batch row b.
int64_t At(const DetectorLayout& l, int64_t b, int64_t a, int64_t c) {
  const int64_t rows = l.classes + 4;
  return l.class_axis == 1 ? (b * rows + 4 + c) * l.anchors + a : (b * l.anchors + a) * rows + 4 + c;
}

void AddOne(const Tensor& ref, const Tensor& test, const DetectorLayout& l, DetectionAgreement& d) {
  const int64_t batch = ref.shape()[0];
  const int64_t stride = l.class_axis == 1 ? l.anchors : 1;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t a = 0; a < l.anchors; ++a) {
      const int64_t begin = At(l, b, a, 0);
      const int64_t cr = ArgMax(ref, begin, l.classes, stride), ct = ArgMax(test, begin, l.classes, stride);
      const double sr = ref.GetAsDouble(At(l, b, a, cr)), st = test.GetAsDouble(At(l, b, a, ct));
      ++d.anchors;
      d.class_agree += cr == ct;
      d.max_score_diff = std::max(d.max_score_diff, std::fabs(sr - st));
      if (sr >= kDetectionScore) {
        ++d.detections;
        d.kept += cr == ct && st >= kDetectionScore;
      } else if (st >= kDetectionScore) {
        ++d.spurious;
      }
    }
  }
}

}  // namespace

std::optional<DetectorLayout> DetectorLayoutOf(const Tensor& t) {
  if (!IsFloating(t.dtype()) || t.rank() != 3) return std::nullopt;
  for (int axis : {1, 2}) {
    const int64_t rows = t.shape()[axis], anchors = t.shape()[3 - axis];
    if (rows < 5 || rows > 1024 || anchors <= rows) continue;
    if (!RowsInUnit(t, axis, 4, rows) || RowsInUnit(t, axis, 0, 4)) continue;
    return DetectorLayout{.class_axis = axis, .classes = rows - 4, .anchors = anchors};
  }
  return std::nullopt;
}

void AddDetections(const TensorSet& reference, const TensorSet& test, std::vector<DetectionAgreement>& tallies) {
  for (const auto& [name, ref] : reference) {
    const Tensor* out = test.Find(name);
    if (out == nullptr || out->shape() != ref.shape() || !IsFloating(out->dtype())) continue;
    if (TaskOf(name, ref) != OutputTask::kDetector) continue;
    const DetectorLayout layout = *DetectorLayoutOf(ref);
    auto it = std::find_if(tallies.begin(), tallies.end(),
                           [&](const DetectionAgreement& a) { return a.output == name; });
    if (it == tallies.end()) it = tallies.insert(tallies.end(), DetectionAgreement{.output = name, .layout = layout});
    AddOne(ref, *out, layout, *it);
    ++it->samples;
  }
}

}  // namespace parity
