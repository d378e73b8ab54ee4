#include "engine/locate/step_chain.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/locate/local_error.h"
#include "engine/quant/layer_match.h"
#include "engine/runner/runner.h"

namespace parity {

void NarrowToKernel(QuantStepTensor& t, double above) {
  t.kernel.clear();
  for (const auto& k : t.chain)
    if (k.steps > above) {
      t.kernel = k.node;
      return;
    }
}

namespace {

// The kernel's region: the uint8 tensors its DequantizeLinear inputs read
// (weights excluded: initializers) and its QuantizeLinear output; false when
// it is not a QDQ kernel.
bool KernelRegion(const GraphView& g, const GraphNode& n, std::vector<std::string>& inputs, std::string& output) {
  const auto consumers = g.consumers.find(n.outputs.empty() ? "" : n.outputs[0]);
  if (consumers == g.consumers.end()) return false;
  for (size_t c : consumers->second)
    if (g.nodes[c].op_type == "QuantizeLinear" && !g.nodes[c].outputs.empty()) output = g.nodes[c].outputs[0];
  if (output.empty()) return false;
  for (const auto& in : n.inputs) {
    const GraphNode* dq = in.empty() ? nullptr : g.Producer(in);
    if (dq == nullptr || dq->op_type != "DequantizeLinear") continue;
    if (g.Producer(dq->inputs[0]) != nullptr || std::find(g.inputs.begin(), g.inputs.end(), dq->inputs[0]) != g.inputs.end())
      inputs.push_back(dq->inputs[0]);  // an activation's codes; a weight's are an initializer
  }
  return !inputs.empty();
}

}  // namespace

Result<std::vector<QuantKernelSteps>> MeasureChain(const StepChainInputs& in, const std::vector<std::string>& covers,
                                                   int* sessions) {
  struct Kernel {
    std::string node, output;
    std::vector<std::string> inputs;
  };
  std::vector<Kernel> kernels;
  std::vector<std::string> missing;  // the chain's inner uint8 tensors the trace did not keep
  for (const auto& name : covers) {
    const auto at = in.target_view.FindNode(name);
    if (!at || !IsComputeOp(in.target_view.nodes[*at].op_type)) continue;
    Kernel k{.node = name};
    if (!KernelRegion(in.target_view, in.target_view.nodes[*at], k.inputs, k.output)) continue;
    for (const auto& t : k.inputs)
      if (!in.reference_values.Contains(t) && std::find(missing.begin(), missing.end(), t) == missing.end())
        missing.push_back(t);
    kernels.push_back(std::move(k));
  }
  TensorSet values = in.reference_values;
  if (!missing.empty()) {
    // The reference model once more, at the reference config, with those tensors exposed.
    PARITY_ASSIGN_OR_RETURN(TensorSet traced,
                            MakeSessionRunner(in.reference)
                                ->Run({.model = in.label + " (chain inputs)", .loaded = &in.reference_model,
                                       .names = missing, .sample = in.sample.name},
                                      in.sample.tensors));
    ++*sessions;
    for (const auto& t : missing)
      if (const Tensor* v = traced.Find(t)) values.Set(t, *v);
  }
  std::vector<QuantKernelSteps> chain;
  for (const auto& k : kernels) {
    const std::string& name = k.node;
    const std::string& output = k.output;
    auto region = CutRegion(in.reference_model, in.target_model, k.inputs, {output}, values);
    if (!region) continue;
    // Grid units: the band is 1 step, so max_abs is the difference in steps.
    TolerancePolicy exact;
    exact.global.atol = 1;
    exact.global.rtol = 0;
    PARITY_ASSIGN_OR_RETURN(RegionRun run, RunRegion(*region, in.reference, in.target, exact,
                                                     fmt::format("{} (kernel '{}' alone)", in.label, name), sessions));
    chain.push_back({.node = name, .tensor = output, .steps = run.local.max_abs});
  }
  return chain;
}

}  // namespace parity
