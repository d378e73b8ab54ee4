#include "engine/run/flatten_control_flow.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/runner/runner.h"
#include "onnx/graph.h"

namespace parity {

namespace {

struct Decided {
  std::vector<ControlFlowDecision> decisions;
  std::vector<BranchTaken> branches;
  std::vector<LoopRan> loops;
  TensorSet outputs;  // the model's own outputs, from the probe's run
};

// Runs the probe model on the sample and reads what each node decided.
Result<Decided> Probe(const ProbeModel& probe, const std::vector<std::string>& model_outputs, const Sample& sample,
                      const std::string& label, const RunConfig& config, double timeout_s) {
  std::vector<std::string> outputs = model_outputs;
  for (const auto& p : probe.probes)
    if (!p.tensor.empty()) outputs.push_back(p.tensor);
  PARITY_ASSIGN_OR_RETURN(TensorSet got, MakeSessionRunner(config)->Run({.model = label + " (control-flow probe)",
                                                                          .loaded = &probe.model,
                                                                          .names = outputs,
                                                                          .timeout_s = timeout_s,
                                                                          .sample = sample.name},
                                                                         sample.tensors));
  Decided d;
  for (const auto& p : probe.probes) {
    if (p.tensor.empty()) continue;
    const Tensor* t = got.Find(p.tensor);
    if (t == nullptr) return InternalError(fmt::format("the control-flow probe of '{}' gave no value", p.node));
    int64_t value = 0;
    if (p.op_type == "If") {
      if (t->size() != 1 || t->dtype() != DType::kBool)
        return InvalidArgument(fmt::format("If '{}': its condition holds {} values, not one bool", p.origin, t->size()));
      value = t->view<bool>()[0] ? 1 : 0;
      d.branches.push_back({.node = p.origin, .body_of = p.body_of, .then_branch = value != 0});
    } else {
      value = t->rank() >= 1 ? t->shape()[0] : 0;
      d.loops.push_back({.node = p.origin, .body_of = p.body_of, .iterations = value});
    }
    d.decisions.push_back({.node = p.node, .value = value});
  }
  for (const auto& name : model_outputs)
    if (const Tensor* t = got.Find(name)) d.outputs.Set(name, *t);
  return d;
}

// The Loops the probe stopped after max_iterations + 1 iterations, as one
// note ("" when none).
std::string CappedLoops(const ProbeModel& probe, const Decided& d, const InlineLimits& limits) {
  std::vector<std::string> capped;
  for (size_t i = 0, k = 0; i < probe.probes.size(); ++i) {
    if (probe.probes[i].tensor.empty()) continue;
    if (probe.probes[i].op_type == "Loop" && d.decisions[k].value > limits.max_iterations)
      capped.push_back(fmt::format("'{}'", probe.probes[i].origin));
    ++k;
  }
  if (capped.empty()) return "";
  return fmt::format("Loop {} ran more than {} iterations, the most parity unrolls: {} body and the other If/Loop "
                     "bodies at its level are not observed on this sample",
                     fmt::join(capped, ", "), limits.max_iterations, capped.size() == 1 ? "its" : "their");
}

// The copy must compute what the model computed on the sample (the same
// kernels run in another order of nodes): where an output differs, the
// body values it shows may not be the model's, and a note says so.
Status CheckCopy(FlatModel& flat, const TensorSet& model_outputs, const Sample& sample, const std::string& label,
                 const RunConfig& config, double timeout_s) {
  PARITY_ASSIGN_OR_RETURN(TensorSet got, MakeSessionRunner(config)->Run({.model = label + " (observation copy)",
                                                                          .loaded = &flat.model,
                                                                          .timeout_s = timeout_s,
                                                                          .sample = sample.name},
                                                                         sample.tensors));
  ++flat.sessions;
  for (const auto& [name, want] : model_outputs) {
    const Tensor* t = got.Find(name);
    const bool same = t && t->dtype() == want.dtype() && t->shape() == want.shape() &&
                      std::equal(want.bytes().begin(), want.bytes().end(), t->bytes().begin());
    if (!same)
      flat.notes.push_back(fmt::format("sample '{}': output '{}' of the inlined copy differs from the model's; the "
                                       "body values shown may not be the model's",
                                       sample.name, name));
  }
  return {};
}

}  // namespace

Result<FlatModel> FlattenForSample(const Model& model, const Sample& sample, const std::string& label,
                                   const FlattenOptions& options) {
  FlatModel flat{.model = model.Clone()};
  TensorSet model_outputs;  // the model's outputs, read in the first round
  for (int round = 0; round < options.max_rounds && HasControlFlow(flat.model); ++round) {
    PARITY_ASSIGN_OR_RETURN(ProbeModel probe, MakeControlFlowProbe(flat.model, options.limits.max_iterations));
    PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(flat.model, {.infer_shapes = false}));
    PARITY_ASSIGN_OR_RETURN(Decided d, Probe(probe, round == 0 ? view.outputs : std::vector<std::string>{}, sample,
                                             label, options.probe, options.timeout_s));
    ++flat.sessions;
    if (round == 0) model_outputs = std::move(d.outputs);
    flat.loops.insert(flat.loops.end(), d.loops.begin(), d.loops.end());
    if (std::string capped = CappedLoops(probe, d, options.limits); !capped.empty()) {
      // The probe stopped a Loop early: what depends on its results (other
      // decisions, the outputs) is not the model's. Nothing is inlined.
      flat.notes.push_back(std::move(capped));
      break;
    }
    PARITY_ASSIGN_OR_RETURN(InlinedModel inlined, InlineControlFlow(flat.model, d.decisions, options.limits));
    flat.branches.insert(flat.branches.end(), d.branches.begin(), d.branches.end());
    for (auto& n : inlined.notes)
      if (std::find(flat.notes.begin(), flat.notes.end(), n) == flat.notes.end()) flat.notes.push_back(std::move(n));
    if (inlined.inlined == 0) break;
    flat.model = std::move(inlined.model);
    flat.changed = true;
  }
  if (flat.changed && HasControlFlow(flat.model) && flat.notes.empty())
    flat.notes.push_back(fmt::format("control flow nested deeper than {} levels is not observed", options.max_rounds));
  if (flat.changed && options.check_copy) PARITY_RETURN_IF_ERROR(CheckCopy(flat, model_outputs, sample, label, options.probe, options.timeout_s));
  return flat;
}

void AddSample(ControlFlowReport& report, const FlatModel& flat, bool judged) {
  report.present = true;
  ++report.samples;
  std::vector<std::pair<std::string, bool>> seen;
  for (const auto& b : flat.branches) {
    if (std::find(seen.begin(), seen.end(), std::pair{b.node, b.then_branch}) != seen.end()) continue;
    seen.emplace_back(b.node, b.then_branch);
    auto it = std::find_if(report.ifs.begin(), report.ifs.end(), [&](const IfCoverage& c) { return c.node == b.node; });
    if (it == report.ifs.end()) it = report.ifs.insert(report.ifs.end(), IfCoverage{.node = b.node});
    ++(b.then_branch ? it->then_samples : it->else_samples);
    if (judged) ++(b.then_branch ? it->then_judged : it->else_judged);
  }
  std::vector<std::string> ran;  // Loops this sample ran the body of, counted once
  for (const auto& l : flat.loops) {
    auto it = std::find_if(report.loops.begin(), report.loops.end(),
                           [&](const LoopCoverage& c) { return c.node == l.node; });
    if (it == report.loops.end()) it = report.loops.insert(report.loops.end(), LoopCoverage{.node = l.node});
    it->most_iterations = std::max(it->most_iterations, l.iterations);
    if (l.iterations == 0 || std::find(ran.begin(), ran.end(), l.node) != ran.end()) continue;
    ran.push_back(l.node);
    ++it->ran_samples;
    if (judged) ++it->ran_judged;
  }
  for (const auto& n : flat.notes)
    if (std::find(report.notes.begin(), report.notes.end(), n) == report.notes.end()) report.notes.push_back(n);
}

void NoteUntakenBranches(ControlFlowReport& report) {
  for (const auto& c : report.ifs)
    for (auto [count, branch] : {std::pair{c.then_samples, "then_branch"}, std::pair{c.else_samples, "else_branch"}})
      if (count == 0)
        report.notes.push_back(fmt::format("If '{}': no sample took its {}; a fault there cannot show", c.node, branch));
}

std::string BodyNodeDescription(const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::string node, where;
  for (const auto& [k, v] : metadata) {
    if (k == kBodyNodeKey) node = v;
    if (k == kBodyOfKey) where = v;
  }
  // Nodes parity adds (a Loop's results stacked) came from no body node.
  if (where.empty() || node.empty()) return "";
  return fmt::format("node '{}' in {}", node, where);
}

}  // namespace parity
