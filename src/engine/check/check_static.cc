// The check stages that look at the model before numbers: syntax (the ONNX
// checker, ORT loads it under both configs) and signature (names, dtypes,
// ranks and dynamic axes against what the user asked the exporter for).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <future>

#include "core/tensor_files.h"
#include "engine/check/check_internal.h"
#include "engine/check/check_reference_same_plan.h"
#include "engine/quant/cast.h"
#include "onnx/edit.h"
#include "onnx/validate.h"
#include "ort/runtime.h"
#include "ort/tensor_info.h"

namespace parity::check_internal {
namespace {

const ValueInfo* FindValue(const std::vector<ValueInfo>& values, const std::string& name) {
  for (const auto& v : values)
    if (v.name == name) return &v;
  return nullptr;
}

std::vector<std::string> Names(const std::vector<ValueInfo>& values) {
  std::vector<std::string> names;
  for (const auto& v : values) names.push_back(v.name);
  return names;
}

// Holds the ONNX model's inputs or outputs against the names the user gave
// the exporter and the dtypes/ranks of the PyTorch dump's tensors.
void CheckSide(const std::string& side, const std::vector<ValueInfo>& onnx, const std::vector<std::string>& asked,
               const TensorSet& torch_values, std::vector<CheckFinding>& out) {
  if (!asked.empty()) {
    if (asked == Names(onnx))
      out.push_back(Pass(fmt::format("signature.{}.names", side),
                         fmt::format("{} names match the export: {}", side, fmt::join(asked, ", "))));
    else
      out.push_back(Fail(fmt::format("signature.{}.names", side),
                         fmt::format("{} names differ: asked the exporter for [{}], the ONNX model has [{}]", side,
                                     fmt::join(asked, ", "), fmt::join(Names(onnx), ", "))));
  }
  for (const auto& [name, value] : torch_values) {
    const ValueInfo* v = FindValue(onnx, name);
    const std::string id = fmt::format("signature.{}.{}", side, name);
    if (v == nullptr) {
      out.push_back(Fail(id, fmt::format("PyTorch {} '{}' has no ONNX counterpart", side, name)));
      continue;
    }
    if (!v->type.dtype || *v->type.dtype != value.dtype()) {
      out.push_back(Fail(id + ".dtype", fmt::format("'{}': ONNX declares {}, PyTorch gives {}", name,
                                                    v->type.dtype_name, DTypeName(value.dtype()))));
    } else if (v->type.has_shape && v->type.dims.size() != value.shape().size()) {
      out.push_back(Fail(id + ".rank", fmt::format("'{}': ONNX rank {} ({}), PyTorch rank {} {}", name,
                                                   v->type.dims.size(), v->type.ToString(), value.shape().size(),
                                                   ShapeToString(value.shape()))));
    } else {
      out.push_back(Pass(id, fmt::format("'{}': {} matches PyTorch's {} {}", name, v->type.ToString(),
                                         DTypeName(value.dtype()), ShapeToString(value.shape()))));
    }
  }
}

// The input names the user asked the exporter for, less those it dropped
// (TorchDump::dropped_inputs). A dropped input PyTorch's outputs do not read
// is a passing finding; one they read (the export froze its traced value),
// or one the dump cannot tell of (made before `unread_inputs`), fails.
std::vector<std::string> AskedInputs(const TorchDump& dump, std::vector<CheckFinding>& out) {
  if (!dump.export_record) return {};
  const TorchExportRecord& record = *dump.export_record;
  std::vector<std::string> asked;
  for (const auto& name : record.input_names) {
    if (std::find(dump.dropped_inputs.begin(), dump.dropped_inputs.end(), name) == dump.dropped_inputs.end()) {
      asked.push_back(name);
      continue;
    }
    const std::string id = fmt::format("signature.inputs.{}.dropped", name);
    const auto& unread = record.unread_inputs;
    if (unread && std::find(unread->begin(), unread->end(), name) != unread->end())
      out.push_back(Pass(id, fmt::format("'{}': the exporter dropped it, and PyTorch's outputs do not change with it "
                                         "(an unused input)",
                                         name)));
    else
      out.push_back(Fail(id, fmt::format("'{}': the exporter dropped it, {}", name,
                                         !unread
                                             ? "and the dump does not say whether PyTorch's outputs read it (dump "
                                               "again with python -m parity.torch dump --export)"
                                             : "but PyTorch's outputs change with it: the export froze its traced "
                                               "value")));
  }
  return asked;
}

// Axes the user asked to be dynamic must be symbolic in the ONNX model.
void CheckDynamicAxes(const TorchExportRecord& record, const ModelInfo& info, std::vector<CheckFinding>& out) {
  for (const auto& [name, axes] : record.dynamic_axes) {
    const ValueInfo* v = FindValue(info.inputs, name);
    if (v == nullptr) v = FindValue(info.outputs, name);
    if (v == nullptr || !v->type.has_shape) continue;
    for (const auto& [axis_text, label] : axes) {
      const size_t axis = std::stoul(axis_text);
      const std::string id = fmt::format("signature.dynamic_axes.{}.{}", name, axis);
      if (axis >= v->type.dims.size()) {
        out.push_back(Fail(id, fmt::format("'{}': asked axis {} ('{}') dynamic, but the ONNX tensor has rank {}",
                                           name, axis, label, v->type.dims.size())));
      } else if (v->type.dims[axis].kind == Dim::Kind::kKnown) {
        out.push_back(Fail(id, fmt::format("'{}': axis {} was asked dynamic ('{}') but is fixed to {} in the ONNX "
                                           "model; was it exported without dynamic_axes?",
                                           name, axis, label, v->type.dims[axis].value)));
      } else {
        out.push_back(Pass(id, fmt::format("'{}': axis {} is dynamic ({})", name, axis,
                                           v->type.dims[axis].ToString())));
      }
    }
  }
}

}  // namespace

namespace {

// Whether the target's session should also give its plan for the layer
// curve (check_locate.cc): a graph the curve is computed for, with node names
// (the plan is mapped by them), judged against a config of itself (a
// --reference-model check's locate fits the samples to each model itself).
bool TargetPlanWanted(const Subject& subject, const StageFlags& flags) {
  return flags.curve_skipped.empty() && !subject.reference.ModelsDiffer() && HasNodeNames(subject.model);
}

// Creates the target's session as a PlannedSession: ORT saves its optimized
// model (weights to /dev/null) while creating the deployed session, with
// ORT's default arena as deployed. False when not wanted or when the plan
// could not be made (the caller then loads the target plainly, and reports
// its error if that fails too).
bool LoadTargetWithPlan(Context& ctx, std::vector<CheckFinding>& f) {
  if (!TargetPlanWanted(ctx.subject, ctx.flags)) return false;
  auto view = BuildGraphView(ctx.subject.model, {.infer_shapes = false});
  auto scratch = ScratchDir::Create("check_target");
  if (!view || !scratch) return false;
  const RunConfig& config = ctx.options.target;
  auto plan = CreatePlannedSession(ctx.subject.model, *view, config, ctx.subject.label, *scratch / "target_optimized.onnx",
                                   ort::SessionExtras{});
  if (!plan || !plan->session()) return false;
  f.push_back(Pass("syntax.ort_load.target", fmt::format("ORT {} loads the model at [{}] in {:.1f} ms",
                                                          ort::OrtVersion(), config.Label(),
                                                          plan->session()->creation_ms())));
  plan->output_names = plan->session()->output_names();
  ctx.target.runner = std::move(plan->runner);  // keeps the deployed session; the plan keeps its map
  ctx.target.scratch.emplace(std::move(*scratch));
  ctx.target.plan.emplace(std::move(*plan));
  return true;
}

// The target plainly, on a Runner of its config that keeps its session, with
// ORT's default CPU arena as deployed (RunnerJob::cpu_mem_arena).
void LoadTarget(Context& ctx, std::vector<CheckFinding>& f) {
  const RunConfig& config = ctx.options.target;
  std::unique_ptr<Runner> runner = MakeSessionRunner(config);
  const Status prepared = runner->Prepare(
      {.model = ctx.subject.label, .loaded = &ctx.subject.model, .keep_session = true, .cpu_mem_arena = true});
  if (!prepared) {
    f.push_back(Fail("syntax.ort_load.target", prepared.error().message()));
    return;
  }
  f.push_back(Pass("syntax.ort_load.target", fmt::format("ORT {} loads the model at [{}] in {:.1f} ms",
                                                          ort::OrtVersion(), config.Label(),
                                                          runner->kept_session()->creation_ms())));
  ctx.target.runner = std::move(runner);
}

// An op ONNX does not define (validate.h): judged by whether ORT created a
// session of the model, which it does only when it registers every op.
CheckFinding RuntimeOpFinding(const Finding& finding, bool ort_loaded) {
  if (ort_loaded)
    return Pass("syntax.runtime_ops", fmt::format("{}: ONNX Runtime {} registers it (it created the session)",
                                                  finding.message, ort::OrtVersion()));
  return Fail("syntax.runtime_ops",
              fmt::format("{}: ONNX Runtime {} could not create a session either (see syntax.ort_load)",
                          finding.message, ort::OrtVersion()));
}

}  // namespace

SyntaxFound StageSyntax(Context& ctx) {
  SyntaxFound found{.stage = {.name = "syntax"}};
  StageResult& stage = found.stage;
  std::vector<CheckFinding>& f = stage.findings;
  // The ONNX checker reads the graph only (a copy without the weights' bytes):
  // it runs on a thread of its own while ORT loads the reference (0.1-0.3 s
  // of a transformer's check here, issue 26).
  auto checked = std::async(std::launch::async, [&model = ctx.subject.model] { return Check(model); });
  std::vector<CheckFinding> reference_load;
  // One session for both when the target's optimizations leave the graph as it is.
  std::unique_ptr<Runner> shared = LoadSharedSession(ctx, reference_load, found.notes);
  std::unique_ptr<Runner> reference = shared ? nullptr : LoadReference(ctx, reference_load);
  Runner* const reference_runner = shared ? shared.get() : reference.get();
  const auto findings = checked.get();
  int errors = 0;
  for (const auto& finding : findings) {
    const std::string id = fmt::format("syntax.{}", finding.stage);
    if (finding.runtime_decides) {
      // ONNX does not define the op; ORT, which runs it, is the authority.
      f.push_back(RuntimeOpFinding(finding, reference_runner != nullptr));
      errors += reference_runner == nullptr;
    } else if (finding.severity == Severity::kError) {
      ++errors;
      f.push_back(Fail(id, finding.message));
    } else {
      f.push_back(Pass(id, fmt::format("{}: {}", SeverityName(finding.severity), finding.message)));
    }
  }
  if (errors == 0 && findings.empty()) f.push_back(Pass("syntax.checker", "the ONNX checker finds nothing"));
  f.push_back(Pass("syntax.opsets", fmt::format("default opset {}, IR version {}", ctx.subject.info.default_opset(),
                                                ctx.subject.info.ir_version)));
  f.insert(f.end(), reference_load.begin(), reference_load.end());
  if (reference_runner != nullptr) {
    PassReference(ctx, *reference_runner);
    reference.reset();  // before the target's session holds its own copy of the weights (a child: its process ends)
  }
  ctx.flags.curve_skipped = CurveSkipReason(ctx);
  if (shared) {
    // The session the reference's pass ran on (check_reference_same_plan.h).
    // The pass timed nothing there but the curve's estimate: the runtime
    // stage times that session once, under the target's name.
    ctx.reference.performance.reset();
    ctx.reference.runtime.clear();
    ctx.target.runner = std::move(shared);
  } else if (!LoadTargetWithPlan(ctx, f)) {
    LoadTarget(ctx, f);
  }
  stage.status = StatusOf(f);
  return found;
}

StageResult StageSignature(Context& ctx) {
  StageResult stage{.name = "signature"};
  std::vector<CheckFinding>& f = stage.findings;
  for (const auto& v : ctx.subject.info.inputs) {
    if (!v.type.dtype)
      f.push_back(Fail(fmt::format("signature.inputs.{}.dtype", v.name),
                       fmt::format("input '{}' has type {}, which parity cannot feed", v.name, v.type.dtype_name)));
  }
  for (const TorchDump& dump : ctx.torch.Traced()) {
    auto torch_inputs = LoadTorchInputs(dump);
    auto torch_outputs = LoadTorchOutputs(dump);
    const TorchExportRecord* record = dump.export_record ? &*dump.export_record : nullptr;
    if (torch_inputs && torch_outputs) {
      CheckSide("inputs", ctx.subject.info.inputs, AskedInputs(dump, f), *torch_inputs, f);
      CheckSide("outputs", ctx.subject.info.outputs, record ? record->output_names : std::vector<std::string>{},
                *torch_outputs, f);
    } else {
      f.push_back(Fail("signature.torch_dump",
                       (torch_inputs ? torch_outputs.error() : torch_inputs.error()).message()));
    }
    if (record) CheckDynamicAxes(*record, ctx.subject.info, f);
  }
  // Dynamic axes exercised: every sample whose shapes differ from the first
  // must be accepted by the model.
  if (const ort::Session* target = ctx.target.session()) {
    for (const auto& sample : ctx.subject.samples) {
      if (SampleKindOf(sample.name) == SampleKind::kAnomaly) continue;
      // With --reference-model the sample is cast to MODEL's floating input dtypes first (RunOn).
      const Sample fed = FedTo(ctx.subject, *target, sample);
      auto status = ort::CheckInputs(target->inputs(), fed.tensors);
      const std::string id = fmt::format("signature.accepts.{}", sample.name);
      if (status)
        f.push_back(Pass(id, fmt::format("accepts {}", DescribeTensors(sample.tensors))));
      else
        f.push_back(Fail(id, fmt::format("sample '{}' ({}) is refused: {}", sample.name,
                                         DescribeTensors(sample.tensors), status.error().message())));
    }
  }
  stage.status = StatusOf(f);
  return stage;
}

}  // namespace parity::check_internal
