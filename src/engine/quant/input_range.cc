#include "engine/quant/input_range.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {
namespace {

double MaxAbs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = std::fabs(t.GetAsDouble(i));
    if (std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

// The |x| a per-tensor QuantizeLinear reading `input` represents, with its
// description; 0 when none reads it directly.
double QuantizerBound(const Model& m, const GraphView& g, const std::string& input, std::string& source) {
  const auto consumers = g.consumers.find(input);
  if (consumers == g.consumers.end()) return 0;
  for (size_t i : consumers->second) {
    const GraphNode& n = g.nodes[i];
    if (n.op_type != "QuantizeLinear" || n.inputs.size() < 3) continue;
    auto scale = ReadInitializer(m, n.inputs[1]);
    auto zero = ReadInitializer(m, n.inputs[2]);
    if (!scale || !zero || scale->size() != 1 || zero->size() != 1) continue;
    double qmin = 0, qmax = 0;
    if (zero->dtype() == DType::kUInt8) qmin = 0, qmax = 255;
    else if (zero->dtype() == DType::kInt8) qmin = -128, qmax = 127;
    else if (zero->dtype() == DType::kUInt16) qmin = 0, qmax = 65535;
    else if (zero->dtype() == DType::kInt16) qmin = -32768, qmax = 32767;
    else continue;
    const double s = std::fabs(scale->GetAsDouble(0)), z = zero->GetAsDouble(0);
    source = fmt::format("QuantizeLinear '{}' (scale {:.4g}, zero point {:g}, {})", n.name, s, z,
                         DTypeName(zero->dtype()));
    return std::max(std::fabs((qmin - z) * s), std::fabs((qmax - z) * s));
  }
  return 0;
}

}  // namespace

std::map<std::string, InputRange> DerivedInputRanges(const Model& derived, const std::vector<Sample>& samples) {
  std::map<std::string, InputRange> ranges;
  for (const Sample& s : samples) {
    if (SampleKindOf(s.name) != SampleKind::kTypical) continue;
    for (const auto& [name, t] : s.tensors) {
      if (!IsFloating(t.dtype())) continue;
      InputRange& r = ranges[name];
      r.bound = std::max(r.bound, MaxAbs(t));
      r.source = "the typical samples";
    }
  }
  auto graph = BuildGraphView(derived, {.infer_shapes = false});
  if (!graph) return ranges;
  for (auto& [name, r] : ranges) {
    std::string source;
    const double q = QuantizerBound(derived, *graph, name, source);
    if (q > r.bound) r = InputRange{.bound = q, .source = source};
  }
  return ranges;
}

std::string OutOfRange(const Sample& sample, const std::map<std::string, InputRange>& ranges) {
  for (const auto& [name, t] : sample.tensors) {
    const auto r = ranges.find(name);
    if (r == ranges.end() || !IsFloating(t.dtype()) || !(r->second.bound > 0)) continue;
    const double m = MaxAbs(t);
    if (m > 1.01 * r->second.bound)
      return fmt::format("'{}' reaches max|x| {:.3g}, beyond {:.3g} ({})", name, m, r->second.bound,
                         r->second.source);
  }
  return "";
}

}  // namespace parity
