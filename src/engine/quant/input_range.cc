#include "engine/quant/input_range.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "compare/judge.h"
#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {
namespace {

std::optional<InputQuantizer> QuantizerReading(const Model& m, const GraphView& g, const std::string& input) {
  const auto consumers = g.consumers.find(input);
  if (consumers == g.consumers.end()) return std::nullopt;
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
    return InputQuantizer{.node = n.name,
                          .grid = std::string(DTypeName(zero->dtype())),
                          .scale = s,
                          .zero_point = z,
                          .bound = std::max(std::fabs((qmin - z) * s), std::fabs((qmax - z) * s))};
  }
  return std::nullopt;
}

}  // namespace

std::optional<InputQuantizer> InputQuantizerOf(const Model& derived, const std::string& input) {
  auto graph = BuildGraphView(derived, {.infer_shapes = false});
  if (!graph) return std::nullopt;
  return QuantizerReading(derived, *graph, input);
}

std::map<std::string, InputRange> DerivedInputRanges(const Model& derived, const std::vector<Sample>& samples) {
  std::map<std::string, InputRange> ranges;
  for (const Sample& s : samples) {
    if (SampleKindOf(s.name) != SampleKind::kTypical) continue;
    for (const auto& [name, t] : s.tensors) {
      if (!IsFloating(t.dtype())) continue;
      InputRange& r = ranges[name];
      r.bound = std::max(r.bound, MaxAbsOf(t));
      r.source = "the typical samples";
    }
  }
  auto graph = BuildGraphView(derived, {.infer_shapes = false});
  if (!graph) return ranges;
  for (auto& [name, r] : ranges) {
    const auto q = QuantizerReading(derived, *graph, name);
    if (q && q->bound > r.bound)
      r = InputRange{.bound = q->bound,
                     .source = fmt::format("QuantizeLinear '{}' (scale {:.4g}, zero point {:g}, {})", q->node,
                                           q->scale, q->zero_point, q->grid)};
  }
  return ranges;
}

std::string OutOfRange(const Sample& sample, const std::map<std::string, InputRange>& ranges) {
  for (const auto& [name, t] : sample.tensors) {
    const auto r = ranges.find(name);
    if (r == ranges.end() || !IsFloating(t.dtype()) || !(r->second.bound > 0)) continue;
    const double m = MaxAbsOf(t);
    if (m > 1.01 * r->second.bound)
      return fmt::format("'{}' reaches max|x| {:.3g}, beyond {:.3g} ({})", name, m, r->second.bound,
                         r->second.source);
  }
  return "";
}

}  // namespace parity
