// Step 1 of Locate and its tensor table: the models named, the target's plan
// (and the reference's), the tensors both sides observe (locate_internal.h).
#include <fmt/format.h>

#include "engine/locate/locate_internal.h"
#include "engine/runner/session_run.h"
#include "onnx/edit.h"

namespace parity::locate_internal {

std::string MainNodeName(const FusedRegion& r) { return r.nodes.empty() ? "" : r.nodes[r.MainNode()]; }

namespace {

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

Result<NamedModels> NameModels(const Model& model, const Model* target_model, const LocateOptions& o) {
  NamedModels m{.model = &model, .target_model = target_model};
  if (!HasNodeNames(model)) m.reference_copy = WithNodeNames(model);
  if (target_model && !HasNodeNames(*target_model)) m.target_copy = WithNodeNames(*target_model);
  m.target_label = target_model ? o.target_label : o.model_label;
  PARITY_ASSIGN_OR_RETURN(m.reference_view,
                          WithContext(BuildGraphView(m.reference(), {.infer_shapes = false}), o.model_label));
  if (target_model) {
    PARITY_ASSIGN_OR_RETURN(m.target_view_copy,
                            WithContext(BuildGraphView(m.target(), {.infer_shapes = false}), m.target_label));
  }
  return m;
}

// The models with `tensors` exposed, for one round of observation.
Status Expose(const NamedModels& m, LocatePlan& p, std::vector<std::string> tensors, const LocateOptions& o) {
  p.round = std::move(tensors);
  PARITY_ASSIGN_OR_RETURN(p.reference_exposed, ExposedSource(m.reference(), p.reference_bytes(), p.round,
                                                             o.model_label + " (reference)"));
  if (m.target_model) {
    PARITY_ASSIGN_OR_RETURN(p.target_exposed_copy, ExposedSource(m.target(), p.target_bytes, p.round, m.target_label));
  }
  return {};
}

// Steps 1 and the table: the target's plan (and the reference's, when it
// optimizes), the report's tensor rows and fused nodes.
Result<LocatePlan> PlanLocate(const NamedModels& m, const LocateOptions& o, const std::filesystem::path& scratch,
                              LocateReport& report) {
  // Each model is read by ORT from its file, or serialized once with its
  // sessions sharing the bytes (an 87 MB model copied per session dominated
  // locate's cost, docs/locate.md).
  PARITY_ASSIGN_OR_RETURN(ort::ModelSource target_bytes, SourceOf(m.target(), m.target_label));
  std::optional<ort::ModelSource> reference_bytes_storage;
  if (m.target_model) {
    PARITY_ASSIGN_OR_RETURN(reference_bytes_storage, SourceOf(m.reference(), o.model_label));
  }
  // The caller's plan of the same target (check's deployed session), when
  // it can stand for the one made here: same names, no optimizer log needed.
  const bool named_as_given = m.target_model ? !m.target_copy.valid() : !m.reference_copy.valid();
  const bool callers_plan = o.target_plan != nullptr && !o.ablation && named_as_given &&
                            (o.target_plan->session() != nullptr || o.target_plan->untouched);
  PlannedSession target_plan;
  if (callers_plan) {
    target_plan = std::move(*o.target_plan);
  } else {
    PARITY_ASSIGN_OR_RETURN(target_plan,
                            CreatePlannedSession(target_bytes, m.target_view(), o.target, m.target_label,
                                                 scratch / "target_optimized.onnx",
                                                 {.capture_optimizer_log = o.ablation, .cpu_mem_arena = false}));
    ++report.sessions_created;
  }
  LocatePlan p{.target = std::move(target_plan),
               .target_bytes = std::move(target_bytes),
               .reference_bytes_copy = std::move(reference_bytes_storage)};
  if (ort::RecordsAssignment(o.target)) report.target_assignment = p.target.ep_assignment;
  report.original_nodes = m.target_view().nodes.size();
  report.optimized_nodes = p.target.optimized_view.nodes.size();
  for (const auto* r : p.target.map.Fused()) report.fused_nodes.push_back(ToReport(*r));

  // A reference that optimizes has a plan of its own; observe only what survives both.
  if (o.reference.opt_level != OptLevel::kDisable) {
    PARITY_ASSIGN_OR_RETURN(p.reference, CreatePlannedSession(p.reference_bytes(), m.reference_view, o.reference,
                                                              o.model_label, scratch / "reference_optimized.onnx"));
    ++report.sessions_created;
  }
  p.observed = PlanTable(m.reference_view, p.target.map, p.reference ? &p.reference->map : nullptr, report, p.row);
  return p;
}

}  // namespace parity::locate_internal
