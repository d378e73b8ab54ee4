#include "engine/torch/torch_compare.h"

#include "engine/torch/inherited_layers.h"
#include "engine/torch/layer_evidence.h"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "compare/judge.h"
#include "engine/run/flatten_control_flow.h"
#include "engine/runner/runner.h"
#include "engine/run/set_outputs.h"
#include "onnx/graph.h"
#include "onnx/validate.h"

namespace parity {
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

TorchLayer TorchLayerOf(const LayerAlignment& a) {
  TorchLayer l;
  l.module = a.module;
  l.call = a.call;
  l.output_index = a.output_index;
  return l;
}

namespace {

// When the first failing layer received an input that already departs from
// PyTorch's (the dump records what each call received), its own computation
// is not what changed the numbers: the op computing that input is. Moves the
// first divergence to the module owning that op (see DivergentOp).
// The move is never made to a module this same report lists as passing,
// nor when the departing tensor is one a layer passes with (a folded Conv,
// unchecked, whose fused node computes the departing tensor, is named).
Status BlameInputOps(const TorchDump& dump, const TensorSet& onnx_values, const TolerancePolicy& policy,
                     TorchComparison& c) {
  if (!c.first_divergence) return {};
  const LayerVerdict& first = c.layers[*c.first_divergence];
  const LayerAlignment& a = first.alignment;
  // A BatchNorm holding a folded Conv's node reads that Conv's input.
  const TorchLayer& layer = dump.layers[a.entering_of.value_or(a.layer)];
  if (!ByStructure(a.how) || layer.inputs.empty()) return {};
  std::set<std::string> passing;
  for (const LayerVerdict& v : c.layers)
    if (v.status == Verdict::kPass) passing.insert(v.alignment.tensor);
  for (const TorchLayerInput& in : layer.inputs) {
    PARITY_ASSIGN_OR_RETURN(Tensor ref, LoadLayerInput(dump, in));
    const EnteringTensor* departing = nullptr;
    bool agrees = false, compared = false;
    for (const EnteringTensor& e : a.entering) {
      const Tensor* test = onnx_values.Find(e.tensor);
      if (test == nullptr || test->shape() != ref.shape() || test->dtype() != ref.dtype()) continue;
      compared = true;
      if (ValuesAgree(a.module, ref, *test, policy)) {
        agrees = true;
        break;
      }
      if (departing == nullptr) departing = &e;
    }
    if (!compared || agrees || departing == nullptr || departing->node.empty() || departing->module == a.module ||
        passing.contains(departing->tensor))
      continue;
    // The owning module's own layer entry (its output fails later) carries it.
    std::optional<size_t> owner;
    for (size_t k = 0; k < c.layers.size() && !owner; ++k) {
      const LayerAlignment& o = c.layers[k].alignment;
      if (o.module == departing->module && o.call == departing->call) owner = k;
    }
    if (owner && c.layers[*owner].status == Verdict::kPass) continue;
    DivergentOp op{departing->tensor, departing->node, departing->op_type, departing->module,
                   TorchDump::Describe(TorchLayerOf(a)), 0};
    if (auto j = JudgeTensor(a.module, ref, *onnx_values.Find(departing->tensor), policy))
      op.max_abs = j->metrics.max_abs;
    if (owner) c.first_divergence = *owner;
    c.divergent_op = std::move(op);
    return {};
  }
  return {};
}

// Every tensor the given outputs are computed from (the outputs included).
std::set<std::string> Ancestors(const GraphView& graph, const std::vector<std::string>& outputs) {
  std::set<std::string> seen(outputs.begin(), outputs.end());
  std::vector<std::string> todo(outputs.begin(), outputs.end());
  while (!todo.empty()) {
    const std::string t = std::move(todo.back());
    todo.pop_back();
    if (const GraphNode* n = graph.Producer(t))
      for (const auto& in : n->inputs)
        if (!in.empty() && seen.insert(in).second) todo.push_back(in);
  }
  return seen;
}

// `feeds`: the tensors the failing outputs are computed from (empty when the
// graph could not be read): the last agreeing layer is searched among those,
// so that a head8 output is not said to depart "after 'head32'".
std::optional<UnexplainedDivergence> Unexplained(const TorchComparison& c, const std::set<std::string>& feeds) {
  if (c.first_divergence || c.outputs.passed()) return std::nullopt;
  UnexplainedDivergence u;
  size_t from = 0;
  for (size_t k = c.layers.size(); k-- > 0;) {
    if (!feeds.empty() && !feeds.contains(c.layers[k].alignment.tensor)) continue;
    if (c.layers[k].status == Verdict::kPass) {
      u.after_module = TorchDump::Describe(TorchLayerOf(c.layers[k].alignment));
      from = k + 1;
      break;
    }
  }
  for (size_t k = from; k < c.layers.size(); ++k)
    if (c.layers[k].status == Verdict::kUnchecked && !c.layers[k].alignment.folded &&
        (feeds.empty() || c.layers[k].alignment.tensor.empty() || feeds.contains(c.layers[k].alignment.tensor)))
      u.unchecked_modules.push_back(TorchDump::Describe(TorchLayerOf(c.layers[k].alignment)));
  for (const auto& t : c.outputs.tensors)
    if (t.status == Verdict::kFail) u.failing_outputs.push_back(t.name);
  for (const auto& f : c.outputs.findings) u.failing_outputs.push_back(f.name);
  return u;
}

}  // namespace

Result<TorchComparison> JudgeAlignment(const TorchDump& dump, Alignment alignment, const TensorSet& onnx_values,
                                       const TolerancePolicy& policy, const TensorSet* conditioning) {
  TorchComparison c;
  c.dump_dir = dump.dir.string();
  c.paths = std::move(alignment.paths);
  for (LayerAlignment& a : alignment.layers) {
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
    if (ref.shape() != test->shape()) {
      v.tolerance = Resolve(al.module, ref, policy);
      v.status = Verdict::kFail;
      v.score = HUGE_VAL;  // as JudgeTensor scores a shape that differs
      v.reason = fmt::format("shape {} in PyTorch, {} in ONNX", ShapeToString(ref.shape()),
                             ShapeToString(test->shape()));
    } else {
      const JudgeOptions judge{.conditioning = conditioning ? conditioning->Find(al.tensor) : nullptr};
      PARITY_ASSIGN_OR_RETURN(JudgedTensor j, WithContext(JudgeTensor(al.module, ref, *test, policy, judge),
                                                          fmt::format("{} vs '{}'", al.file, al.tensor)));
      TakeJudgment(v, std::move(j));
      // Float32's noise at the edge of the band is a note, not evidence.
      if (IsIsolatedExcursion(ref, *test, v, v.note)) v.status = Verdict::kPass;
    }
    if (v.status == Verdict::kFail && !c.first_divergence) c.first_divergence = c.layers.size();
    c.layers.push_back(std::move(v));
  }
  PARITY_RETURN_IF_ERROR(PassInheritedLayers(dump, onnx_values, c));
  PARITY_RETURN_IF_ERROR(BlameInputOps(dump, onnx_values, policy, c));
  return c;
}

namespace {

// A module whose last computation a runtime's optimizer fused into an op
// ONNX does not define (ORT's SkipLayerNormalization takes a GPT-2 block's
// residual Add) has no ONNX tensor of its own: structure aligns it with the
// last tensor left in its scope, an input of that op, which then departs
// from the module's output although every output agrees. Such a layer is
// unaligned, with the reason, instead of a made-up divergence.
Status UnalignRuntimeAbsorbed(const Model& model, const TorchDump& dump, const TensorSet& values,
                              const TolerancePolicy& policy, std::vector<LayerAlignment>& alignment) {
  const std::vector<std::string> runtime_nodes = RuntimeOpNodes(model);
  if (runtime_nodes.empty()) return {};
  auto graph = BuildGraphView(model, {.infer_shapes = false});
  if (!graph) return {};
  const std::set<std::string> runtime(runtime_nodes.begin(), runtime_nodes.end());
  for (LayerAlignment& a : alignment) {
    if (!ByStructure(a.how) || a.tensor.empty()) continue;
    const auto consumers = graph->consumers.find(a.tensor);
    const Tensor* test = values.Find(a.tensor);
    if (consumers == graph->consumers.end() || test == nullptr) continue;
    for (size_t i : consumers->second) {
      const GraphNode& n = graph->nodes[i];
      if (!runtime.contains(n.name)) continue;
      PARITY_ASSIGN_OR_RETURN(Tensor ref, LoadLayer(dump, dump.layers[a.layer]));
      if (ref.shape() == test->shape() && ValuesAgree(a.module, ref, *test, policy)) break;  // its own output
      a.reason = fmt::format("its output is computed inside node '{}' ({}{}), an op a runtime registers: the last "
                             "tensor of its scope, '{}', is an input of that node, not the module's output",
                             n.name, n.domain.empty() ? "" : n.domain + ".", n.op_type, a.tensor);
      a.how = AlignHow::kNone;
      a.tensor.clear();
      a.node.clear();
      a.op_type.clear();
      break;
    }
  }
  return {};
}

// The job of `model` (graph `graph`) with every tensor returned: its outputs,
// then every other node output. The Runner exposes them on bytes ORT parses
// (the model's own file or serialization with the outputs appended:
// session_run.h ExposedSource), not on a clone serialized again (one copy of
// the weights fewer: 500 MB for gpt2_small in `check --torch`). Its session
// is kept for LayerSpread's runs.
RunnerJob ObservingJob(const Model& model, const GraphView& graph, const std::string& label) {
  RunnerJob job{.model = label, .loaded = &model, .names = graph.outputs, .keep_session = true, .sample = "torch"};
  // Constants (a weight's Transpose: 150 MB for gpt2_small's tied
  // embedding) are no layer's output and would be fetched, and copied, on
  // every run: left out (the aligner takes them as not observed).
  for (const auto& t : IntermediateTensors(graph))
    if (!t.constant && !t.is_graph_output) job.names.push_back(t.name);
  return job;
}

// A model with If/Loop: its observation copy for the dump's inputs
// (engine/run/flatten_control_flow.h), whose branch and iteration tensors (their
// nodes keep the exporter's scopes) the aligner can then see; empty
// otherwise.
Result<std::optional<FlatModel>> ObservationCopy(const Model& model, const TensorSet& dumped_inputs,
                                                 const TorchDump& dump, const RunConfig& config,
                                                 const std::string& label) {
  if (!HasControlFlow(model)) return std::optional<FlatModel>{};
  PARITY_ASSIGN_OR_RETURN(GraphView graph, WithContext(BuildGraphView(model, {.infer_shapes = false}), label));
  PARITY_ASSIGN_OR_RETURN(TensorSet feeds, InputsForModel(dumped_inputs, graph.inputs, dump.dir.string()));
  PARITY_ASSIGN_OR_RETURN(FlatModel flat, FlattenForSample(model, Sample{"torch", std::move(feeds)}, label,
                                                           {.probe = config, .check_copy = false}));
  return std::optional<FlatModel>(std::move(flat));
}

}  // namespace

Result<TorchComparison> CompareWithTorch(const Model& model, const TorchDump& dump,
                                         const RunConfig& onnx_config, const TorchCompareOptions& options) {
  const std::string label = !options.label.empty()  ? options.label
                            : !model.path().empty() ? model.path().string()
                                                    : std::string("<model>");
  PARITY_ASSIGN_OR_RETURN(TensorSet dumped_inputs, LoadTorchInputs(dump));
  PARITY_ASSIGN_OR_RETURN(std::optional<FlatModel> copy,
                          ObservationCopy(model, dumped_inputs, dump, onnx_config, label));
  const Model& judged = copy ? copy->model : model;
  PARITY_ASSIGN_OR_RETURN(GraphView graph, WithContext(BuildGraphView(judged, {.infer_shapes = false}), label));
  RunnerJob job = ObservingJob(judged, graph, label);
  std::unique_ptr<Runner> runner = MakeSessionRunner(onnx_config);
  PARITY_ASSIGN_OR_RETURN(TensorSet inputs, InputsForModel(dumped_inputs, graph.inputs, dump.dir.string()));
  if (options.keep) options.keep->inputs = inputs;
  const TensorSet fed = inputs;  // for the conditioning probe (layer_evidence.h)
  // Every tensor left in ORT's buffers (no copy of them all) unless some are
  // kept past this function: borrowed, they would keep the session (its
  // weights) with them, and copying them out as well costs more than the
  // copy of every tensor (gpt2_small's check: +28 MiB, +0.2 s).
  job.buffers = options.keep ? ort::OutputBuffers::kCopied : ort::OutputBuffers::kBorrowed;
  PARITY_ASSIGN_OR_RETURN(TensorSet values, runner->Run(job, inputs));

  const AlignOptions align{.policy = options.policy, .search_window = options.search_window};
  PARITY_ASSIGN_OR_RETURN(auto alignment, Align(dump, judged, values, align));
  PARITY_RETURN_IF_ERROR(UnalignRuntimeAbsorbed(judged, dump, values, options.policy, alignment.layers));
  const Alignment aligned = alignment;  // judged again, conditioned, when a layer fails
  PARITY_ASSIGN_OR_RETURN(TorchComparison c,
                          JudgeAlignment(dump, std::move(alignment), values, options.policy));
  // A failing layer on an ill-conditioned sample: the bands floored by how
  // far float32 moves each failing tensor (layer_evidence.h LayerSpread).
  if (c.Count(Verdict::kFail) > 0) {
    PARITY_ASSIGN_OR_RETURN(TensorSet spread, LayerSpread(*runner, job, fed, values, c));
    if (!spread.empty()) {
      PARITY_ASSIGN_OR_RETURN(c, JudgeAlignment(dump, aligned, values, options.policy, &spread));
    }
  }
  c.model_label = label;

  // The final outputs, by their ONNX names.
  PARITY_ASSIGN_OR_RETURN(TensorSet ref_outputs, LoadTorchOutputs(dump));
  TensorSet test_outputs;
  for (const auto& item : ref_outputs)
    if (const Tensor* t = values.Find(item.name)) test_outputs.Set(item.name, *t);
  CompareOptions compare;
  compare.policy = options.policy;
  compare.set_groups = SetValuedOutputs(judged);
  PARITY_ASSIGN_OR_RETURN(c.outputs, CompareSets(ref_outputs, test_outputs, compare));
  std::set<std::string> feeds;
  if (!c.outputs.passed() && !c.first_divergence) {
    std::vector<std::string> failing;
    for (const auto& t : c.outputs.tensors)
      if (t.status == Verdict::kFail) failing.push_back(t.name);
    if (auto graph = BuildGraphView(judged, {.infer_shapes = false}); graph && !failing.empty())
      feeds = Ancestors(*graph, failing);
  }
  ReinstatePropagatingExcursion(c, feeds);
  c.unexplained = Unexplained(c, feeds);
  if (options.keep)
    for (const auto& name : options.keep->names)
      if (const Tensor* t = values.Find(name)) options.keep->values.Set(name, *t);
  return c;
}

Status CalibrateOnTorchFp64(const TorchDump& dump, CompareOptions& options, TensorSet* fp64) {
  return CalibrateOnTorchFp64(dump, dump.Samples().front(), options, fp64);
}

Status CalibrateOnTorchFp64(const TorchDump& dump, const TorchDumpSample& sample, CompareOptions& options,
                            TensorSet* fp64) {
  if (sample.outputs_fp64.empty() || options.policy.mode != ToleranceMode::kScaled || options.policy.global.atol)
    return {};
  PARITY_ASSIGN_OR_RETURN(*fp64, WithContext(LoadTorchFiles(dump, sample.outputs_fp64), "the dump's float64 outputs"));
  options.noise_reference = fp64;
  options.policy.mode = ToleranceMode::kCalibrated;
  return {};
}

}  // namespace parity
