#include "engine/locate/runtime_diff.h"

#include <fmt/format.h>

#include <chrono>
#include <set>

#include "compare/judge.h"
#include "engine/locate/locate_internal.h"
#include "engine/locate/runtime_diff_internal.h"
#include "engine/run/optimized_plan.h"
#include "onnx/edit.h"

namespace parity {
namespace runtime_diff {
namespace {

using locate_internal::MainNodeName;

std::string PlanKey(const FusedRegion& r) { return fmt::format("{}#{}", fmt::join(r.covers, ","), RegionSignature(r)); }

PlanFusion ToFusion(const FusedRegion& r) {
  return {.name = MainNodeName(r), .op_type = r.OpSummary(), .covers = r.covers};
}

// Fused nodes of `a` that `b` does not make (the same covers and the same
// optimized nodes' op types and outputs).
std::vector<PlanFusion> OnlyIn(const FusionMap& a, const FusionMap& b) {
  std::set<std::string> keys;
  for (const auto& r : b.regions) keys.insert(PlanKey(r));
  std::vector<PlanFusion> out;
  for (const FusedRegion* r : a.Fused())
    if (!keys.contains(PlanKey(*r))) out.push_back(ToFusion(*r));
  return out;
}

// The runtime's plan: ORT saves its optimized model of the untouched model,
// whose outputs for the sample are kept (the observer check's reference).
Status Plan(Diff& d, Side& side, const std::string& tag) {
  const auto plan_path = d.scratch / (tag + "_plan.onnx");
  PARITY_ASSIGN_OR_RETURN(side.untouched,
                          side.runner->Run({.model = d.model_path, .save_plan = plan_path}, d.sample.tensors));
  ++d.jobs;
  auto optimized = Model::Load(plan_path, {.external_data = false});
  if (!optimized)
    return RuntimeError(fmt::format("onnxruntime {}: cannot read the optimized model it saved: {}",
                                    side.runner->ran().ort.version, optimized.error().message()));
  PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(*optimized, {.infer_shapes = false}));
  side.map = BuildFusionMap(d.view, view);
  return {};
}

// The tensors that survive both plans, in topological order.
std::vector<std::string> Observed(const Diff& d, LocateReport& report) {
  std::vector<std::string> observed;
  for (const auto& t : IntermediateTensors(d.view)) {
    LocateTensor row{.name = t.name, .producer = d.view.nodes[t.producer].name, .index = t.producer};
    const FusedRegion* r = d.target.map.RegionOf(t.name);
    if (r == nullptr) r = CulpritRegion(d, t.name);
    if (r != nullptr) row.fused_node = MainNodeName(*r);
    const bool in_target = d.target.map.IsSurviving(t.name), in_reference = d.reference.map.IsSurviving(t.name);
    if (in_target && in_reference && observed.size() < d.options.max_observed) {
      observed.push_back(t.name);
    } else {
      row.reason = !in_target      ? "fused away in the target runtime's plan"
                   : !in_reference ? "fused away in the reference runtime's plan"
                                   : "not observed (more tensors than max_observed)";
    }
    report.tensors.push_back(std::move(row));
  }
  return observed;
}

// Both runtimes observe `observed`; each row is judged; the final outputs of
// the exposed runs must be bitwise those of the untouched ones.
Status Trace(Diff& d, const std::vector<std::string>& observed, LocateReport& report) {
  std::vector<std::string> names = observed;
  for (const auto& out : d.view.outputs)
    if (std::find(names.begin(), names.end(), out) == names.end()) names.push_back(out);
  for (Side* side : {&d.reference, &d.target}) {
    PARITY_ASSIGN_OR_RETURN(side->values, side->runner->Run({.model = d.model_path, .names = names}, d.sample.tensors));
    ++d.jobs;
  }
  report.observer_check = true;
  for (const Side* side : {&d.reference, &d.target})
    for (const auto& nt : side->untouched) {
      const Tensor* exposed = side->values.Find(nt.name);
      report.observer_check = report.observer_check && exposed != nullptr && exposed->BitwiseEquals(nt.tensor);
    }
  report.observer_mode = "exposed";
  for (auto& row : report.tensors) {
    const Tensor* ref = d.reference.values.Find(row.name);
    const Tensor* test = d.target.values.Find(row.name);
    if (!row.reason.empty() || ref == nullptr || test == nullptr) continue;
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(row.name, *ref, *test, d.options.policy));
    row.metrics = j.metrics;
    row.tolerance = j.tolerance.tolerance;
    row.score = j.score;
    row.status = j.passed() ? Verdict::kPass : Verdict::kFail;
    row.reason = j.reason;
  }
  return {};
}

LocateFusedNode ToReport(const FusedRegion& r) {
  const size_t main = r.MainNode();
  return {.name = MainNodeName(r), .op_type = r.op_types.empty() ? "" : r.op_types[main],
          .domain = r.domains.empty() ? "" : r.domains[main], .nodes = r.nodes, .op_types = r.op_types,
          .covers = r.covers, .inputs = r.boundary, .outputs = r.outputs};
}

Status PrepareModel(Diff& d, const Model& model) {
  d.named = &model;
  if (!HasNodeNames(model)) {
    d.named_copy = WithNodeNames(model);
    d.named = &d.named_copy;
  }
  // The file itself when it is the model (unedited; its weights may be left
  // in it): no copy of a big model's weights is written.
  const bool as_loaded = !model.unmodified_file().empty() || (model.weights_in_file() && !model.path().empty());
  if (d.named == &model && as_loaded) {
    d.model_path = model.path();
  } else {
    d.model_path = d.scratch / "model.onnx";
    PARITY_RETURN_IF_ERROR(d.named->Save(d.model_path));
  }
  PARITY_ASSIGN_OR_RETURN(d.view, WithContext(BuildGraphView(*d.named, {.infer_shapes = false}),
                                              d.options.model_label));
  return {};
}

}  // namespace

const FusedRegion* CulpritRegion(const Diff& d, const std::string& tensor) {
  const FusedRegion* t = d.target.map.RegionOf(tensor);
  const FusedRegion* r = d.reference.map.RegionOf(tensor);
  if (t == nullptr) return r;
  if (r == nullptr) return t;
  if (t->unchanged != r->unchanged) return t->unchanged ? r : t;
  return r->covers.size() > t->covers.size() ? r : t;
}

}  // namespace runtime_diff

Result<LocateReport> LocateAcrossRuntimes(const Model& model, const Sample& sample, const RuntimeLocateOptions& o) {
  using namespace runtime_diff;
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("runtimes"));
  Diff d{.options = o, .sample = sample, .scratch = scratch.path()};
  PARITY_RETURN_IF_ERROR(PrepareModel(d, model));
  PARITY_ASSIGN_OR_RETURN(d.reference.runner, MakeOrtRunner(o.reference, o.binary));
  PARITY_ASSIGN_OR_RETURN(d.target.runner, MakeOrtRunner(o.target, o.binary));
  PARITY_RETURN_IF_ERROR(Plan(d, d.reference, "reference"));
  PARITY_RETURN_IF_ERROR(Plan(d, d.target, "target"));

  LocateReport report{.ort = d.target.runner->ran().ort, .model = o.model_label, .sample = sample.name,
                      .reference = d.reference.runner->ran().config, .target = d.target.runner->ran().config};
  RuntimeComparison& rc = report.runtimes.emplace();
  rc.reference = d.reference.runner->ran();
  rc.target = d.target.runner->ran();
  rc.reference_fused = d.reference.map.Fused().size();
  rc.target_fused = d.target.map.Fused().size();
  rc.only_reference = OnlyIn(d.reference.map, d.target.map);
  rc.only_target = OnlyIn(d.target.map, d.reference.map);
  report.original_nodes = d.view.nodes.size();
  for (const FusedRegion* r : d.target.map.Fused()) report.fused_nodes.push_back(ToReport(*r));
  report.optimized_nodes = 0;
  for (const auto& r : d.target.map.regions) report.optimized_nodes += r.nodes.size();

  PARITY_RETURN_IF_ERROR(Trace(d, Observed(d, report), report));
  for (const auto& row : report.tensors) {
    if (row.status != Verdict::kFail) continue;
    const FusedRegion* r = CulpritRegion(d, row.name);
    report.first_divergence = FirstDivergence{.tensor = row.name, .producer = row.producer};
    if (r != nullptr) {
      report.first_divergence->fused_node = locate_internal::MainNodeName(*r);
      report.first_divergence->op_type = r->OpSummary();
      report.first_divergence->covers = r->covers;
      PARITY_RETURN_IF_ERROR(MeasureCulprit(d, *r, report));
    }
    break;
  }
  report.sessions_created = d.jobs;
  report.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace parity
