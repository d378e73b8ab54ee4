#include "engine/quant/quant_layers.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "compare/judge.h"
#include "engine/quant/cast.h"
#include "engine/quant/input_range.h"
#include "engine/quant/layer_match.h"
#include "engine/runner/runner.h"
#include "onnx/edit.h"
#include "onnx/graph.h"

namespace parity {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The largest element of a scale initializer (per-axis: the coarsest channel).
double ScaleOf(const Model& m, const std::string& name) {
  if (name.empty()) return 0;
  auto t = ReadInitializer(m, name);
  if (!t) return 0;
  double s = 0;
  for (int64_t i = 0; i < t->size(); ++i) s = std::max(s, std::fabs(t->GetAsDouble(i)));
  return s;
}

std::string GridOf(const Model& m, const std::string& zero_point) {
  if (zero_point.empty()) return "uint8";
  auto t = ReadInitializer(m, zero_point);
  return t ? std::string(DTypeName(t->dtype())) : "uint8";
}

Result<QuantLoss> Loss(const std::string& name, const Tensor& ref, const Tensor& test, double* step,
                       const PrecisionOptions& o) {
  PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, ref, test, o.policy));
  if (j.metrics.count == 0 && ref.size() > 0) return QuantLoss{};  // a shape difference
  if (*step <= 0 && test.dtype() == DType::kFloat16)
    *step = Float16Step(std::max(std::fabs(j.metrics.ref_min), std::fabs(j.metrics.ref_max)));
  return QuantLoss{.measured = true,
                   .sqnr_db = j.metrics.snr_db,
                   .max_abs = j.metrics.max_abs,
                   .max_steps = *step > 0 ? MaxSteps(j.metrics, *step) : 0,
                   .ref_absmax = std::max(std::fabs(j.metrics.ref_min), std::fabs(j.metrics.ref_max)),
                   .nonfinite = j.metrics.nan_mismatch + j.metrics.inf_mismatch};
}

// Runs `model` at ORT_DISABLE_ALL with `names` (node outputs) exposed.
Result<TensorSet> TraceAll(const Model& model, const GraphView& view, const std::vector<std::string>& names,
                           const Sample& sample, const std::string& label) {
  std::vector<std::string> fetch = view.outputs;  // the outputs, then the node outputs asked
  for (const auto& n : names)
    if (view.producer.count(n) && std::find(fetch.begin(), fetch.end(), n) == fetch.end()) fetch.push_back(n);
  // A float16 model without keep_io_types takes float16 inputs: the float sample, rounded.
  const Sample fed = FitToGraph(view, sample);
  PARITY_ASSIGN_OR_RETURN(TensorSet out, MakeSessionRunner(RunConfig{})->Run(
                                             {.model = label, .loaded = &model, .names = fetch, .sample = fed.name},
                                             fed.tensors));
  for (const auto& t : fed.tensors) out.Set(t.name, t.tensor);
  return out;
}

struct Traces {
  TensorSet float_values, derived_values;
};

Result<Traces> TraceBoth(const Model& fm, const GraphView& fv, const Model& dm, const GraphView& dv,
                         const LayerMatch& match, const Sample& sample, const PrecisionOptions& o) {
  std::vector<std::string> fnames, dnames;
  for (const auto& p : match.layers) {
    fnames.push_back(p.layer.tensor);
    fnames.insert(fnames.end(), p.layer.inputs.begin(), p.layer.inputs.end());
    dnames.push_back(p.layer.derived_tensor);
    dnames.insert(dnames.end(), p.layer.inputs.begin(), p.layer.inputs.end());
    if (p.weight && !p.weight->derived_is_initializer) dnames.push_back(p.weight->derived_tensor);
  }
  Traces t;
  PARITY_ASSIGN_OR_RETURN(t.float_values, TraceAll(fm, fv, fnames, sample, o.float_label));
  PARITY_ASSIGN_OR_RETURN(t.derived_values, TraceAll(dm, dv, dnames, sample, o.derived_label));
  return t;
}

// Dynamic quantization's weight: (codes - zero point) x scale, per tensor
// (quantize_dynamic's default); nullopt for a per-channel one.
std::optional<Tensor> Dequantize(const Model& dm, const LayerPlan::Weight& w) {
  auto codes = ReadInitializer(dm, w.derived_tensor);
  auto scale = ReadInitializer(dm, w.scale);
  if (!codes || !scale || scale->size() != 1) return std::nullopt;
  double zp = 0;
  if (!w.zero_point.empty()) {
    auto z = ReadInitializer(dm, w.zero_point);
    if (!z || z->size() != 1) return std::nullopt;
    zp = z->GetAsDouble(0);
  }
  const double s = scale->GetAsDouble(0);
  Tensor out(DType::kFloat32, codes->shape());
  for (int64_t i = 0; i < codes->size(); ++i)
    out.mutable_view<float>()[i] = static_cast<float>((codes->GetAsDouble(i) - zp) * s);
  return out;
}

Status MeasureWeight(const Model& fm, const Model& dm, const LayerPlan& p, const Traces& t,
                     const PrecisionOptions& o, QuantLayer& layer) {
  auto fw = ReadInitializer(fm, p.weight->float_tensor);
  Tensor dw;
  if (p.weight->codes) {
    auto w = Dequantize(dm, *p.weight);
    if (!w) return {};
    dw = std::move(*w);
  } else if (p.weight->derived_is_initializer) {
    auto w = ReadInitializer(dm, p.weight->derived_tensor);
    if (!w) return {};
    dw = *w;
  } else if (const Tensor* w = t.derived_values.Find(p.weight->derived_tensor)) {
    dw = *w;
  }
  if (!fw || dw.size() == 0 || !IsFloating(fw->dtype())) return {};
  QuantWeight w{.tensor = p.weight->float_tensor, .derived_tensor = p.weight->derived_tensor,
                .step = ScaleOf(dm, p.weight->scale)};
  PARITY_ASSIGN_OR_RETURN(w.loss, Loss(w.tensor, *fw, dw, &w.step, o));
  layer.weight = std::move(w);
  return {};
}

// The layer cut from the derived model, fed the float model's inputs.
Status MeasureLocal(const Model& dm, const Tensor& ref, const Traces& t, const PrecisionOptions& o,
                    QuantLayer& layer, int* sessions) {
  TensorSet feed;
  for (const auto& in : layer.inputs) {
    const Tensor* fv = t.float_values.Find(in);
    const Tensor* dv = t.derived_values.Find(in);
    if (fv == nullptr || dv == nullptr) {
      layer.note = fmt::format("local loss not measured: input '{}' not traced", in);
      return {};
    }
    feed.Set(in, CastFloating(*fv, dv->dtype()));
  }
  auto region = ExtractRegion(dm, layer.inputs, {layer.derived_tensor});
  if (!region) {
    layer.note = "local loss not measured: " + region.error().message();
    return {};
  }
  const std::string label = fmt::format("{} (layer '{}' alone)", o.derived_label, layer.node);
  PARITY_ASSIGN_OR_RETURN(TensorSet out, MakeSessionRunner(RunConfig{})->Run(
                                             {.model = label, .loaded = &*region, .sample = "float inputs"}, feed));
  ++*sessions;
  const Tensor* test = out.Find(layer.derived_tensor);
  if (test == nullptr) return InternalError(fmt::format("region output '{}' missing", layer.derived_tensor));
  double step = layer.step;
  PARITY_ASSIGN_OR_RETURN(layer.local, Loss(layer.tensor, ref, *test, &step, o));
  return {};
}

// float16's largest finite value.
constexpr double kFloat16Max = 65504;

void FindOverflow(QuantReport& r) {
  if (r.kind != "float16") return;
  for (const auto& l : r.layers) {
    const QuantLoss& c = l.cumulative;
    if (!c.measured || (c.ref_absmax <= kFloat16Max && c.nonfinite == 0)) continue;
    r.overflow = QuantOverflow{
        .node = l.node,
        .op_type = l.op_type,
        .tensor = l.tensor,
        .float_absmax = c.ref_absmax,
        .nonfinite = c.nonfinite,
        .reason = c.ref_absmax > kFloat16Max
                      ? fmt::format("its float activations reach {:.6g}, past float16's largest value 65504",
                                    c.ref_absmax)
                      : fmt::format("{} Inf/NaN elements in the float16 model where the float model is finite",
                                    c.nonfinite)};
    return;
  }
}

// How far a layer's float values leave what its output quantizer holds, on
// the side they leave it by most: the grid holds [(qmin - zp) * s, (qmax -
// zp) * s], so an asymmetric uint8 grid (zero point 119, a Conv before a
// residual Add) holds 136 steps above zero and 119 below, not 255 either way
// (measuring against 255 steps missed a 2x clip, and the advice then named
// the Add that reads it: issue 53).
struct GridExcess {
  double ratio = 0;          // the float extreme over the grid's edge on that side
  double representable = 0;  // |that edge|
  double float_absmax = 0;   // |the float extreme| on that side
};

GridExcess ExcessOf(const Model& derived, const std::string& zero_point, const std::string& grid, double step,
                    const Tensor& ref) {
  GridExcess e;
  if (step <= 0 || (grid != "int8" && grid != "uint8")) return e;
  double zp = 0;
  if (!zero_point.empty())
    if (auto z = ReadInitializer(derived, zero_point); z && z->size() > 0) zp = z->GetAsDouble(0);
  const double qmin = grid == "uint8" ? 0 : -128, qmax = grid == "uint8" ? 255 : 127;
  const double hi = (qmax - zp) * step, lo = (qmin - zp) * step;
  double fmin = 0, fmax = 0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double v = ref.GetAsDouble(i);
    if (!std::isfinite(v)) continue;
    fmin = std::min(fmin, v);
    fmax = std::max(fmax, v);
  }
  if (hi > 0 && fmax / hi > e.ratio) e = {fmax / hi, hi, fmax};
  if (lo < 0 && fmin / lo > e.ratio) e = {fmin / lo, -lo, -fmin};
  return e;
}

// The QDQ layer whose float values leave its output grid by the widest
// margin (`excess`, parallel to r.layers), or the input quantizer the
// sample's values leave by a wider one (QuantClip), with the layers that read it.
void FindClipping(QuantReport& r, const std::vector<GridExcess>& excess, const Model& derived,
                  const Sample& sample) {
  if (r.kind != "qdq") return;
  double worst = 1.2;  // beyond a fifth past the edge: the tail of a healthy calibration is not it
  for (size_t i = 0; i < r.layers.size() && i < excess.size(); ++i) {
    const auto& l = r.layers[i];
    if (!l.cumulative.measured || !(excess[i].ratio > worst)) continue;
    worst = excess[i].ratio;
    r.clipped = QuantClip{.node = l.node, .op_type = l.op_type, .tensor = l.tensor, .grid = l.grid, .step = l.step,
                          .representable = excess[i].representable, .float_absmax = excess[i].float_absmax};
  }
  for (const auto& [input, x] : sample.tensors) {  // the input quantizers, on the sample's values
    const auto q = InputQuantizerOf(derived, input);
    if (!q || !(q->bound > 0) || !IsFloating(x.dtype())) continue;
    const double absmax = MaxAbsOf(x), ratio = absmax / q->bound;
    if (!(ratio > worst)) continue;
    worst = ratio;
    r.clipped = QuantClip{.node = q->node, .op_type = "QuantizeLinear", .tensor = input, .grid = q->grid,
                          .step = q->scale, .representable = q->bound, .float_absmax = absmax};
  }
  if (!r.clipped) return;
  for (const auto& l : r.layers)
    if (std::find(l.inputs.begin(), l.inputs.end(), r.clipped->tensor) != l.inputs.end())
      r.clipped->readers.push_back(l.node);
}

void RankWorst(QuantReport& r) {
  std::unordered_map<std::string, double> sqnr;
  for (const auto& l : r.layers) sqnr[l.tensor] = l.cumulative.measured ? l.cumulative.sqnr_db : kInf;
  for (size_t i = 0; i < r.layers.size(); ++i) {
    auto& l = r.layers[i];
    l.inherited_sqnr_db = kInf;
    for (const auto& in : l.inputs)
      if (auto it = sqnr.find(in); it != sqnr.end()) l.inherited_sqnr_db = std::min(l.inherited_sqnr_db, it->second);
    if (!l.local.measured) continue;
    if (!r.worst_local || l.local.sqnr_db < r.layers[*r.worst_local].local.sqnr_db) r.worst_local = i;
  }
}

}  // namespace

std::string QuantClip::Describe() const {
  std::string readers_text;
  for (size_t i = 0; i < readers.size() && i < 3; ++i) readers_text += (i ? ", '" : "'") + readers[i] + "'";
  if (readers.size() > 3) readers_text += ", ...";
  const std::string readers_part = readers.empty() ? std::string("the layers after it") : readers_text;
  if (op_type == "QuantizeLinear")  // a graph input's own quantizer
    return fmt::format("the input quantizer '{}' of '{}' ({} scale {:.4g}) holds |x| <= {:.4g}, but the input "
                       "reaches {:.4g} ({:.2g}x): it clips, and {} read(s) the clipped input; calibrate it on inputs "
                       "of the range the model is fed (or keep its first layer out of int8)",
                       node, tensor, grid, step, representable, float_absmax, float_absmax / representable,
                       readers_part);
  return fmt::format("the output quantizer of '{}' ({}, {} scale {:.4g}) holds |x| <= {:.4g} on one side of zero, but "
                     "its float values reach {:.4g} there ({:.2g}x): it clips, and {} read(s) the clipped tensor; keep '{}' out of int8 "
                     "(quantize_static nodes_to_exclude) or widen its calibration range",
                     node, op_type, grid, step, representable, float_absmax, float_absmax / representable,
                     readers_part, node);
}

bool IsDerivedPrecision(const Model& float_model, const Model& derived) {
  auto fv = BuildGraphView(float_model, {.infer_shapes = false});
  auto dv = BuildGraphView(derived, {.infer_shapes = true});
  return fv && dv && MatchLayers(*fv, *dv).kind != "float";
}

Result<QuantReport> AnalyzePrecision(const Model& float_in, const Model& derived_in, const Sample& sample,
                                     const PrecisionOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  // Node names written (a copy only when a model lacks them), as locate does.
  std::optional<Model> float_copy, derived_copy;
  if (!HasNodeNames(float_in)) float_copy = WithNodeNames(float_in);
  if (!HasNodeNames(derived_in)) derived_copy = WithNodeNames(derived_in);
  const Model& fm = float_copy ? *float_copy : float_in;
  const Model& dm = derived_copy ? *derived_copy : derived_in;
  PARITY_ASSIGN_OR_RETURN(GraphView fv, WithContext(BuildGraphView(fm, {.infer_shapes = false}), o.float_label));
  PARITY_ASSIGN_OR_RETURN(GraphView dv, WithContext(BuildGraphView(dm, {.infer_shapes = true}), o.derived_label));
  LayerMatch match = MatchLayers(fv, dv);
  QuantReport r{.kind = match.kind,
                .rule = match.kind == "qdq"       ? "steps of each tensor's QuantizeLinear scale"
                        : match.kind == "float16" ? "steps of float16 spacing at max|ref| (unit roundoff 2^-11)"
                                                  : "no quantization found: float error only",
                .unmatched = match.unmatched,
                .compute_layers = match.compute_layers,
                .compute_matched = match.compute_matched,
                .sessions = 2};
  PARITY_ASSIGN_OR_RETURN(Traces t, TraceBoth(fm, fv, dm, dv, match, sample, o));
  std::vector<GridExcess> excess;  // parallel to r.layers
  for (auto& p : match.layers) {
    QuantLayer layer = std::move(p.layer);
    const Tensor* ref = t.float_values.Find(layer.tensor);
    const Tensor* test = t.derived_values.Find(layer.derived_tensor);
    if (ref == nullptr || test == nullptr || !IsFloating(ref->dtype()) || !IsFloating(test->dtype())) continue;
    layer.step = ScaleOf(dm, p.scale);
    layer.grid = !p.scale.empty()                   ? GridOf(dm, p.zero_point)
                 : p.weight && p.weight->codes       ? "dynamic"
                 : test->dtype() == DType::kFloat16 ? "float16"
                                                     : "float";
    PARITY_ASSIGN_OR_RETURN(layer.cumulative, Loss(layer.tensor, *ref, *test, &layer.step, o));
    excess.push_back(p.scale.empty() ? GridExcess{} : ExcessOf(dm, p.zero_point, layer.grid, layer.step, *ref));
    if (p.weight) PARITY_RETURN_IF_ERROR(MeasureWeight(fm, dm, p, t, o, layer));
    if (o.local) PARITY_RETURN_IF_ERROR(MeasureLocal(dm, *ref, t, o, layer, &r.sessions));
    r.layers.push_back(std::move(layer));
  }
  RankWorst(r);
  FindOverflow(r);
  FindClipping(r, excess, dm, sample);
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace parity
