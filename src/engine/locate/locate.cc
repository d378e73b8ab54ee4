#include "engine/locate/locate.h"

#include <fmt/format.h>

#include <chrono>
#include <unordered_set>

#include "engine/locate/local_error.h"
#include "engine/locate/locate_internal.h"
#include "onnx/edit.h"

namespace parity {

namespace {

using locate_internal::Context;

std::string MainNodeName(const FusedRegion& r) { return r.nodes.empty() ? "" : r.nodes[r.MainNode()]; }

LocateFusedNode ToReport(const FusedRegion& r) {
  const size_t main = r.MainNode();
  return {.name = MainNodeName(r),
          .op_type = r.op_types.empty() ? "" : r.op_types[main],
          .domain = r.domains.empty() ? "" : r.domains[main],
          .nodes = r.nodes,
          .op_types = r.op_types,
          .covers = r.covers,
          .inputs = r.boundary,
          .outputs = r.outputs};
}

// The rows of the tensor table, in the reference's topological order, and the
// list of tensors both sides observe.
std::vector<std::string> PlanTable(const GraphView& reference_view, const FusionMap& target_map,
                                   const FusionMap* reference_map, LocateReport& report,
                                   std::unordered_map<std::string, size_t>& row) {
  std::vector<std::string> observed;
  for (const auto& t : IntermediateTensors(reference_view)) {
    LocateTensor entry{.name = t.name, .producer = reference_view.nodes[t.producer].name, .index = t.producer};
    const bool in_target = target_map.IsSurviving(t.name);
    const bool in_reference = reference_map == nullptr || reference_map->IsSurviving(t.name);
    if (in_target && in_reference) {
      entry.fused_node = MainNodeName(*target_map.RegionOf(t.name));
      observed.push_back(t.name);
    } else if (!in_target) {
      auto it = target_map.fused_away.find(t.name);
      if (it != target_map.fused_away.end() && it->second >= 0) {
        const auto& r = target_map.regions[it->second];
        entry.fused_node = MainNodeName(r);
        entry.reason = fmt::format("fused away: inside '{}' ({})", entry.fused_node, r.OpSummary());
      } else {
        entry.reason = "not in the target's optimized graph (folded or removed)";
      }
    } else {
      entry.reason = "fused away in the reference's optimized graph";
    }
    row.emplace(t.name, report.tensors.size());
    report.tensors.push_back(std::move(entry));
  }
  return observed;
}

}  // namespace

Result<LocateReport> Locate(const Model& model, const Model* target_model, const Sample& sample,
                            const LocateOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  LocateReport report;
  report.model = o.model_label;
  report.target_model = target_model ? o.target_label : "";
  report.sample = sample.name;
  report.reference = o.reference;
  report.target = o.target;

  // Node names written; a copy only when the model lacks them.
  Model reference_storage, target_storage;
  if (!HasNodeNames(model)) reference_storage = WithNodeNames(model);
  if (target_model && !HasNodeNames(*target_model)) target_storage = WithNodeNames(*target_model);
  const Model& reference_named = reference_storage.valid() ? reference_storage : model;
  const Model& target_ref =
      !target_model ? reference_named : (target_storage.valid() ? target_storage : *target_model);
  const std::string target_label = target_model ? o.target_label : o.model_label;
  PARITY_ASSIGN_OR_RETURN(GraphView reference_view,
                          WithContext(BuildGraphView(reference_named, {.infer_shapes = false}), o.model_label));
  GraphView target_view_storage;
  if (target_model) {
    PARITY_ASSIGN_OR_RETURN(target_view_storage,
                            WithContext(BuildGraphView(target_ref, {.infer_shapes = false}), target_label));
  }
  const GraphView& target_view = target_model ? target_view_storage : reference_view;
  PARITY_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create("locate"));

  // Each model is serialized once; its sessions share the bytes (an 87 MB
  // model copied per session dominated locate's cost, docs/locate.md).
  PARITY_ASSIGN_OR_RETURN(ort::ModelSource target_bytes, SerializedSource(target_ref, target_label));
  std::optional<ort::ModelSource> reference_bytes_storage;
  if (target_model) {
    PARITY_ASSIGN_OR_RETURN(reference_bytes_storage, SerializedSource(reference_named, o.model_label));
  }
  // 1. The target's plan.
  PARITY_ASSIGN_OR_RETURN(PlannedSession plan,
                          CreatePlannedSession(target_bytes, target_view, o.target, target_label,
                                               scratch / "target_optimized.onnx", o.ablation));
  ++report.sessions_created;
  report.original_nodes = target_view.nodes.size();
  report.optimized_nodes = plan.optimized_view.nodes.size();
  for (const auto* r : plan.map.Fused()) report.fused_nodes.push_back(ToReport(*r));

  // A reference that optimizes has a plan of its own; observe only what survives both.
  const ort::ModelSource& reference_bytes = target_model ? *reference_bytes_storage : target_bytes;
  std::optional<PlannedSession> reference_plan;
  if (o.reference.opt_level != OptLevel::kDisable) {
    PARITY_ASSIGN_OR_RETURN(reference_plan,
                            CreatePlannedSession(reference_bytes, reference_view, o.reference, o.model_label,
                                                 scratch / "reference_optimized.onnx"));
    ++report.sessions_created;
  }
  std::unordered_map<std::string, size_t> row;
  const std::vector<std::string> observed =
      PlanTable(reference_view, plan.map, reference_plan ? &reference_plan->map : nullptr, report, row);

  // The model(s) with the observed tensors exposed: without a target model,
  // the reference and the target observe the same bytes.
  PARITY_ASSIGN_OR_RETURN(ort::ModelSource reference_exposed,
                          ExposedSource(reference_named, reference_bytes, observed, o.model_label + " (reference)"));
  std::optional<ort::ModelSource> target_exposed_storage;
  if (target_model) {
    PARITY_ASSIGN_OR_RETURN(target_exposed_storage, ExposedSource(target_ref, target_bytes, observed, target_label));
  }
  const ort::ModelSource& target_exposed = target_model ? *target_exposed_storage : reference_exposed;
  reference_bytes_storage.reset();
  target_bytes = ort::ModelSource();

  // 2. The reference trace: kept (region inputs are fed from it).
  Context ctx{.options = o,
              .sample = sample,
              .reference_model = reference_named,
              .target_model = target_ref,
              .reference_view = reference_view,
              .target_view = target_view,
              .plan = plan,
              .scratch = scratch.path(),
              .reference_values = sample.tensors,
              .reference_outputs = {},
              .target_outputs = {},
              .tensor_row = row,
              .report = report};
  const auto keep = [&](const std::string& name, const Tensor& t) -> Status {
    ctx.reference_values.Set(name, t);
    return {};
  };
  if (reference_plan) {
    PARITY_ASSIGN_OR_RETURN(Observation ref_obs,
                            ObserveTarget(reference_exposed, reference_view, *reference_plan, o.reference, observed,
                                          sample, scratch.path(), o.model_label + " (reference)", keep));
    report.sessions_created += ref_obs.sessions;
    ctx.reference_outputs = std::move(ref_obs.untouched_outputs);
    for (auto& n : ref_obs.notes) report.observer_notes.push_back("reference: " + n);
  } else {
    PARITY_ASSIGN_OR_RETURN(TensorSet outs, ObserveUnoptimized(reference_exposed, o.reference, observed, sample,
                                                               o.model_label + " (reference)", keep,
                                                               &report.sessions_created));
    for (const auto& info : reference_view.outputs)
      if (const Tensor* t = outs.Find(info)) ctx.reference_outputs.Set(info, *t);
  }

  // 3. The target trace, compared tensor by tensor as it arrives.
  const auto compare = [&](const std::string& name, const Tensor& test) -> Status {
    LocateTensor& entry = report.tensors[row.at(name)];
    const Tensor* ref = ctx.reference_values.Find(name);
    if (ref == nullptr) {
      entry.reason = "no reference value";
      return {};
    }
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, *ref, test, o.policy));
    entry.status = j.reason.empty() ? Verdict::kPass : Verdict::kFail;
    entry.reason = j.reason;
    entry.metrics = j.metrics;
    entry.tolerance = j.tolerance;
    entry.score = j.score;
    return {};
  };
  PARITY_ASSIGN_OR_RETURN(Observation obs, ObserveTarget(target_exposed, target_view, plan, o.target, observed, sample,
                                                         scratch.path(), target_label, compare, o.observe));
  report.sessions_created += obs.sessions;
  report.observer_check = obs.observer_check;
  report.observer_mode = obs.mode;
  for (auto& n : obs.notes) report.observer_notes.push_back(std::move(n));
  ctx.target_outputs = std::move(obs.untouched_outputs);

  for (const auto& t : report.tensors) {
    if (t.status != Verdict::kFail) continue;
    const FusedRegion* r = plan.map.RegionOf(t.name);
    FirstDivergence d{.tensor = t.name, .producer = t.producer};
    if (r) {
      d.fused_node = MainNodeName(*r);
      d.op_type = r->OpSummary();
      d.covers = r->covers;
    }
    report.first_divergence = std::move(d);
    break;
  }

  // 4-6. Culprits, ablation, reproduction.
  if (report.first_divergence) PARITY_RETURN_IF_ERROR(locate_internal::FindCulprits(ctx));
  report.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace parity
