#include "engine/torch_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/runner.h"
#include "report/compare_json.h"

namespace parity {
namespace {

using nlohmann::json;

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

// The dump's inputs under the model's input names: by name when every model
// input is in the dump, else by position when the counts agree (a dump named
// after the forward signature, an export that named its inputs `input.1`).
Result<TensorSet> InputsForModel(const TensorSet& dumped, const std::vector<std::string>& model_inputs,
                                 const std::string& dump_dir) {
  bool by_name = true;
  for (const auto& name : model_inputs) by_name = by_name && dumped.Contains(name);
  if (by_name) return dumped;
  if (dumped.size() != model_inputs.size())
    return InvalidArgument(
        fmt::format("{}: the dump has {} input(s) and the model {}; names do not match either", dump_dir,
                    dumped.size(), model_inputs.size()));
  TensorSet out;
  for (size_t i = 0; i < model_inputs.size(); ++i) out.Set(model_inputs[i], dumped[i].tensor);
  return out;
}

}  // namespace

int TorchComparison::Count(AlignHow how) const {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(),
                                        [&](const LayerVerdict& l) { return l.alignment.how == how; }));
}

int TorchComparison::Count(Verdict v) const {
  return static_cast<int>(
      std::count_if(layers.begin(), layers.end(), [&](const LayerVerdict& l) { return l.status == v; }));
}

Result<TorchComparison> JudgeAlignment(const TorchDump& dump, std::vector<LayerAlignment> alignment,
                                       const TensorSet& onnx_values, const TolerancePolicy& policy) {
  TorchComparison c;
  c.dump_dir = dump.dir.string();
  for (LayerAlignment& a : alignment) {
    LayerVerdict v;
    v.alignment = std::move(a);
    const LayerAlignment& al = v.alignment;
    const Tensor* test = al.tensor.empty() ? nullptr : onnx_values.Find(al.tensor);
    if (test == nullptr) {
      v.reason = al.tensor.empty() ? al.reason : fmt::format("ONNX tensor '{}' was not observed", al.tensor);
      c.layers.push_back(std::move(v));
      continue;
    }
    PARITY_ASSIGN_OR_RETURN(Tensor ref, LoadLayer(dump, dump.layers[al.layer]));
    v.tolerance = Resolve(al.module, ref, policy);
    if (ref.shape() != test->shape()) {
      v.status = Verdict::kFail;
      v.reason = fmt::format("shape {} in PyTorch, {} in ONNX", ShapeToString(ref.shape()),
                             ShapeToString(test->shape()));
    } else {
      const Tolerance& tol = v.tolerance.tolerance;
      const MetricsOptions metrics{.atol = tol.atol, .rtol = tol.rtol};
      PARITY_ASSIGN_OR_RETURN(v.metrics, WithContext(ComputeMetrics(ref, *test, metrics),
                                                     fmt::format("{} vs '{}'", al.file, al.tensor)));
      v.reason = Judge(v.metrics, tol);
      v.status = v.reason.empty() ? Verdict::kPass : Verdict::kFail;
    }
    if (v.status == Verdict::kFail && !c.first_divergence) c.first_divergence = c.layers.size();
    c.layers.push_back(std::move(v));
  }
  return c;
}

Result<TorchComparison> CompareWithTorch(const Model& model, const TorchDump& dump,
                                         const RunConfig& onnx_config, const TorchCompareOptions& options) {
  const std::string label = !options.label.empty()  ? options.label
                            : !model.path().empty() ? model.path().string()
                                                    : std::string("<model>");
  PARITY_ASSIGN_OR_RETURN(TensorSet dumped_inputs, LoadTorchInputs(dump));
  PARITY_ASSIGN_OR_RETURN(ObservedModel observed, WithContext(ObserveAllTensors(model), label));
  PARITY_ASSIGN_OR_RETURN(ort::Session session, CreateSession(observed.model, onnx_config, label));
  PARITY_ASSIGN_OR_RETURN(TensorSet inputs,
                          InputsForModel(dumped_inputs, session.input_names(), dump.dir.string()));
  PARITY_ASSIGN_OR_RETURN(TensorSet values, RunSample(session, Sample{"torch", std::move(inputs)}, label));

  const AlignOptions align{.policy = options.policy, .search_window = options.search_window};
  PARITY_ASSIGN_OR_RETURN(auto alignment, Align(dump, model, values, align));
  PARITY_ASSIGN_OR_RETURN(TorchComparison c,
                          JudgeAlignment(dump, std::move(alignment), values, options.policy));
  c.model_label = label;

  // The final outputs, by their ONNX names.
  PARITY_ASSIGN_OR_RETURN(TensorSet ref_outputs, LoadTorchOutputs(dump));
  TensorSet test_outputs;
  for (const auto& item : ref_outputs)
    if (const Tensor* t = values.Find(item.name)) test_outputs.Set(item.name, *t);
  CompareOptions compare;
  compare.policy = options.policy;
  PARITY_ASSIGN_OR_RETURN(c.outputs, CompareSets(ref_outputs, test_outputs, compare));
  return c;
}

json TorchComparisonToJson(const TorchComparison& c) {
  json layers = json::array();
  for (const LayerVerdict& v : c.layers) {
    const LayerAlignment& a = v.alignment;
    json e = {{"module", a.module},
              {"file", a.file},
              {"type", a.type},
              {"call", a.call},
              {"output_index", a.output_index ? json(*a.output_index) : json(nullptr)},
              {"leaf", a.leaf},
              {"tensor", OrNull(a.tensor)},
              {"node", OrNull(a.node)},
              {"op_type", OrNull(a.op_type)},
              {"how", AlignHowName(a.how)},
              {"status", VerdictName(v.status)}};
    if (!a.reason.empty()) e["reason"] = a.reason;
    if (v.status != Verdict::kUnchecked) {
      e["metrics"] = MetricsToJson(v.metrics);
      e["atol"] = v.tolerance.tolerance.atol;
      e["rtol"] = v.tolerance.tolerance.rtol;
      if (!v.reason.empty()) e["failure"] = v.reason;
    }
    layers.push_back(std::move(e));
  }
  json first = nullptr;
  if (c.first_divergence) {
    const LayerVerdict& v = c.layers[*c.first_divergence];
    first = {
        {"module", v.alignment.module},         {"call", v.alignment.call}, {"file", v.alignment.file},
        {"tensor", v.alignment.tensor},         {"node", v.alignment.node}, {"op_type", v.alignment.op_type},
        {"max_abs", JsonNumber(v.metrics.max_abs)}, {"reason", v.reason}};
  }
  json outputs = json::array();
  for (const auto& t : c.outputs.tensors)
    outputs.push_back({{"name", t.name},
                       {"status", VerdictName(t.status)},
                       {"max_abs", JsonNumber(t.metrics.max_abs)},
                       {"reason", t.reason}});
  for (const auto& f : c.outputs.findings)
    outputs.push_back(
        {{"name", f.name}, {"status", "fail"}, {"reason", std::string(FindingKindName(f.kind))}});
  return {{"model", c.model_label},
          {"dump", c.dump_dir},
          {"alignment", std::move(layers)},
          {"first_divergence", std::move(first)},
          {"summary",
           {{"layers", c.layers.size()},
            {"aligned_by_name", c.Count(AlignHow::kName)},
            {"aligned_by_value", c.Count(AlignHow::kValue)},
            {"unaligned", c.Count(AlignHow::kNone)},
            {"pass", c.Count(Verdict::kPass)},
            {"fail", c.Count(Verdict::kFail)},
            {"unchecked", c.Count(Verdict::kUnchecked)}}},
          {"outputs", std::move(outputs)},
          {"passed", c.passed()}};
}

}  // namespace parity
