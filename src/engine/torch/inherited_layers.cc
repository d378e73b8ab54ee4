#include "engine/torch/inherited_layers.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "compare/metrics.h"

namespace parity {
namespace {

bool NonExpanding(const std::string& type) {
  static const std::set<std::string> kTypes = {
      "ReLU",      "ReLU6",     "Hardtanh",  "LeakyReLU",         "Sigmoid",          "Tanh",
      "Hardsigmoid", "Dropout", "Identity",  "MaxPool1d",         "MaxPool2d",        "MaxPool3d",
      "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"};
  return kTypes.contains(type);
}

// The largest departure from PyTorch of the input the layer read: its one
// recorded input against the ONNX tensor entering its nodes with the same
// shape; nullopt when that cannot be said (several inputs, none observed).
Result<std::optional<double>> InputDeparture(const TorchDump& dump, const LayerAlignment& a,
                                             const TensorSet& onnx_values, const std::set<std::string>& passing) {
  const TorchLayer& layer = dump.layers[a.entering_of.value_or(a.layer)];
  if (layer.inputs.size() != 1) return std::optional<double>{};
  PARITY_ASSIGN_OR_RETURN(Tensor ref, LoadLayerInput(dump, layer.inputs.front()));
  for (const EnteringTensor& e : a.entering) {
    const Tensor* test = onnx_values.Find(e.tensor);
    if (test == nullptr || !passing.contains(e.tensor) || test->shape() != ref.shape() ||
        test->dtype() != ref.dtype())
      continue;
    PARITY_ASSIGN_OR_RETURN(TensorMetrics m, ComputeMetrics(ref, *test, {.threads = 1}));
    return std::optional<double>{m.max_abs};
  }
  return std::optional<double>{};
}

}  // namespace

Status PassInheritedLayers(const TorchDump& dump, const TensorSet& onnx_values, TorchComparison& c) {
  std::set<std::string> passing;
  for (const LayerVerdict& v : c.layers)
    if (v.status == Verdict::kPass) passing.insert(v.alignment.tensor);
  bool changed = false;
  std::map<std::string, std::string> inherited;  // tensor -> the layer that passed as inherited
  for (LayerVerdict& v : c.layers) {
    const LayerAlignment& a = v.alignment;
    if (v.status != Verdict::kFail || !NonExpanding(a.type) || v.metrics.count == 0 || v.metrics.nan_mismatch > 0)
      continue;
    PARITY_ASSIGN_OR_RETURN(std::optional<double> input, InputDeparture(dump, a, onnx_values, passing));
    if (!input || v.metrics.max_abs > *input) continue;
    v.status = Verdict::kPass;
    v.reason = fmt::format("inherited: max_abs {:.3g} is no more than its input's departure {:.3g} (a passing "
                           "tensor), and a {} cannot grow an error; its own band ({}) was set by its smaller output",
                           v.metrics.max_abs, *input, a.type, v.reason);
    inherited.emplace(a.tensor, TorchDump::Describe(dump.layers[a.layer]));
    changed = true;
  }
  if (!changed) return {};
  // A container whose output is that layer's tensor (the Sequential ending in
  // the ReLU6) fails and passes with it.
  for (LayerVerdict& v : c.layers)
    if (auto it = inherited.find(v.alignment.tensor); v.status == Verdict::kFail && it != inherited.end()) {
      v.status = Verdict::kPass;
      v.reason = fmt::format("inherited: its output is that of '{}', which passes as inherited", it->second);
    }
  c.first_divergence.reset();
  for (size_t k = 0; k < c.layers.size() && !c.first_divergence; ++k)
    if (c.layers[k].status == Verdict::kFail) c.first_divergence = k;
  return {};
}

}  // namespace parity
