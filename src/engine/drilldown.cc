// The running half of the drill-down (drilldown.h): sub-regions cut out of a
// culprit region, run under both configs, narrowed step by step.
#include "engine/drilldown.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/optimized_plan.h"

namespace parity {

namespace {

std::vector<std::string> NamesOf(const GraphView& view, const DrillNodes& d, size_t lo, size_t hi) {
  std::vector<size_t> indices(d.nodes.begin() + lo, d.nodes.begin() + hi);
  std::sort(indices.begin(), indices.end());  // the view's topological order, as `covers` are
  std::vector<std::string> names;
  for (size_t i : indices) names.push_back(view.nodes[i].name);
  return names;
}

// Only what a range still needs: the values of its inputs.
TensorSet KeepOnly(const TensorSet& values, const std::vector<std::string>& names) {
  TensorSet kept;
  for (const auto& n : names)
    if (const Tensor* t = values.Find(n)) kept.Set(n, *t);
  return kept;
}

// The region of `map` that stands for the whole sub-region: the fused one
// covering the most original nodes (an unchanged node when nothing fused).
FusedRegion MainRegion(const FusionMap& map) {
  const FusedRegion* best = nullptr;
  for (const auto& r : map.regions) {
    if (best == nullptr || (best->unchanged && !r.unchanged) ||
        (best->unchanged == r.unchanged && r.covers.size() > best->covers.size()))
      best = &r;
  }
  return best ? *best : FusedRegion{};
}

}  // namespace

Result<DrillResult> DrillDown(const RegionModels& region, const RegionRun& run, const DrillOptions& o,
                              int* sessions) {
  DrillResult result;
  LocateNarrowing& n = result.narrowing;
  PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(region.reference, {.infer_shapes = false}));
  PARITY_ASSIGN_OR_RETURN(GraphView target_view, BuildGraphView(region.target, {.infer_shapes = false}));

  // 1. The groups: the target's plan of the region without layout renaming.
  RunConfig grouping = o.target;
  grouping.optimized_model_path.clear();
  for (const auto& name : o.layout_optimizers)
    if (std::find(grouping.disabled_optimizers.begin(), grouping.disabled_optimizers.end(), name) ==
        grouping.disabled_optimizers.end())
      grouping.disabled_optimizers.push_back(name);
  PARITY_ASSIGN_OR_RETURN(FusionMap group_map, PlanOf(region.target, target_view, grouping,
                                                       o.label + " (groups)", o.scratch / "drill_groups.onnx"));
  ++n.sessions;
  const DrillNodes d = GroupNodes(view, group_map);
  const std::vector<std::string>& region_outputs = view.outputs;
  size_t lo = 0, hi = d.nodes.size();
  n.steps.push_back({.covers = NamesOf(view, d, lo, hi),
                     .inputs = view.inputs,
                     .outputs = view.outputs,
                     .groups = CountGroups(d, lo, hi),
                     .local = run.local});
  n.complete = n.steps.back().groups <= 1;
  if (n.complete || run.local.pass) {
    if (sessions) *sessions += n.sessions;
    return result;
  }

  // 2-4. Split, run, keep the first range that reproduces the error: it fails
  // the tolerance with a score of at least a quarter of the region's (capped
  // at 1, the band's edge). A range that fails only elementwise at noise level
  // (values of 1e7 whose rounding crosses zero) does not reproduce it.
  const double threshold = std::min(1.0, run.local.score / 4);
  const auto reproduces = [&](const ErrorSummary& e) { return !e.pass && e.score >= threshold; };
  TensorSet known = region.inputs;
  while (CountGroups(d, lo, hi) > 1) {
    const std::vector<size_t> cuts = CandidateCuts(view, d, lo, hi, region_outputs);
    if (cuts.empty()) {
      n.note = fmt::format("no cut of the last {} nodes keeps ORT's fused groups whole; narrowing stops here",
                           hi - lo);
      break;
    }
    bool moved = false;
    std::string failure;
    for (size_t tried = 0; tried < cuts.size() && tried < o.max_cut_tries && !moved; ++tried) {
      const size_t p = cuts[tried];
      for (const auto& [a, b] : {std::pair{lo, p}, std::pair{p, hi}}) {
        RangeTensors io = TensorsOfRange(view, d, a, b, region_outputs);
        if (io.outputs.empty()) continue;
        auto models = CutRegion(region.reference, region.target, io.inputs, io.outputs, known);
        if (!models) {
          failure = models.error().message();
          continue;
        }
        const std::string label = fmt::format("{} sub-region {}..{}", o.label, a, b);
        PARITY_ASSIGN_OR_RETURN(RegionRun r, RunRegion(*models, o.reference, o.target, o.policy, label, &n.sessions));
        ++n.sub_regions_run;
        for (const auto& [name, t] : r.expected) known.Set(name, t);
        if (!reproduces(r.local)) continue;
        n.steps.push_back({.covers = NamesOf(view, d, a, b),
                           .inputs = io.inputs,
                           .outputs = io.outputs,
                           .groups = CountGroups(d, a, b),
                           .local = r.local});
        lo = a;
        hi = b;
        result.models = std::move(*models);
        result.run = std::move(r);
        result.inputs = std::move(io.inputs);
        result.outputs = std::move(io.outputs);
        known = KeepOnly(known, result.inputs);
        moved = true;
        break;
      }
    }
    if (!moved) {
      n.note = fmt::format(
          "no sub-region of the last {} nodes ({} groups) reproduces its error on its own (ORT fuses across "
          "the cuts tried, or the error builds up over several groups){}; the smallest region that reproduces "
          "it is kept",
          hi - lo, CountGroups(d, lo, hi), failure.empty() ? "" : " (" + failure + ")");
      break;
    }
  }
  n.complete = CountGroups(d, lo, hi) <= 1;
  result.narrowed = n.steps.size() > 1;
  if (result.narrowed) {
    // What ORT makes of the last step under the target config: its name and ops.
    PARITY_ASSIGN_OR_RETURN(result.target_view, BuildGraphView(result.models.target, {.infer_shapes = false}));
    RunConfig target = o.target;
    target.optimized_model_path.clear();
    PARITY_ASSIGN_OR_RETURN(FusionMap final_map, PlanOf(result.models.target, result.target_view, target,
                                                        o.label + " (group)", o.scratch / "drill_group.onnx"));
    ++n.sessions;
    result.group = MainRegion(final_map);
  }
  if (sessions) *sessions += n.sessions;
  return result;
}

}  // namespace parity
