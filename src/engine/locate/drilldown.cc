// The running half of the drill-down (drilldown.h): sub-regions cut out of a
// culprit region, run under both configs, narrowed step by step.
#include "engine/locate/drilldown.h"

#include "engine/run/compiled_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/progress.h"
#include "engine/run/optimized_plan.h"

namespace parity {

namespace {

std::vector<std::string> NamesOf(const GraphView& view, const DrillNodes& d, size_t lo, size_t hi) {
  std::vector<size_t> indices(d.nodes.begin() + lo, d.nodes.begin() + hi);
  std::sort(indices.begin(), indices.end());  // the view's topological order, as `covers` are
  std::vector<std::string> names;
  for (size_t i : indices) names.push_back(view.nodes[i].name);
  return names;
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

// The search of steps 2-4 (drilldown.h). A first half is always run; when
// it does not reproduce the error, the second half is entered without being
// run (the region reproduces it and its first half does not, so the second
// must, unless ORT fused across the cut): it is run only when none of its own
// sub-ranges reproduces the error, to tell "fused across my cut" (back out,
// try another cut) from "fused across every cut inside me" (stop here). The
// second half is the costly one in a CNN (the deep layers hold most weights).
class Narrower {
 public:
  Narrower(const GraphView& view, const DrillNodes& d, const DrillOptions& o, double threshold, TensorSet known,
           DrillResult& result)
      : view_(view), d_(d), o_(o), threshold_(threshold), known_(std::move(known)), result_(result) {}

  // Narrows nodes[lo, hi), cut out as `models` and run as `run` (nullopt:
  // entered without being run). Returns whether the range reproduces the
  // error; on true the narrowing ends at the smallest range found (its models
  // are moved into the result by their owner, Keep); on false the caller
  // pops the step it pushed for the range.
  Result<bool> Step(size_t lo, size_t hi, const RegionModels& models, std::optional<RegionRun>& run) {
    // Progress on a terminal (core/progress.h): nodes left out of the region so far.
    if (span_ == 0) span_ = hi - lo;
    ReportProgress("drill-down", span_ - std::min(span_, hi - lo), span_);
    LocateNarrowing& n = result_.narrowing;
    const size_t depth = n.steps.size();
    if (CountGroups(d_, lo, hi) > 1) {
      const std::vector<size_t> cuts = CandidateCuts(view_, d_, lo, hi, view_.outputs);
      for (size_t tried = 0; tried < cuts.size() && tried < o_.max_cut_tries; ++tried) {
        const size_t p = cuts[tried];
        // The first half, run.
        RangeTensors a_io = TensorsOfRange(view_, d_, lo, p, view_.outputs);
        auto a = CutRegion(models.reference, models.target, a_io.inputs, a_io.outputs, known_);
        if (!a) {
          failure_ = a.error().message();
          continue;
        }
        std::optional<RegionRun> a_run;
        PARITY_ASSIGN_OR_RETURN(a_run, RunRegion(*a, o_.reference, o_.target, o_.policy,
                                                 fmt::format("{} sub-region {}..{}", o_.label, lo, p), &n.sessions));
        ++n.sub_regions_run;
        for (const auto& [name, t] : a_run->expected) known_.Set(name, t);
        if (Reproduces(a_run->local)) {
          Push(lo, p, a_io, a_run->local, true);
          PARITY_ASSIGN_OR_RETURN(bool found, Step(lo, p, *a, a_run));  // true: it reproduces
          Keep(lo, p, *a, a_run);
          return found;
        }
        // The second half, presumed.
        RangeTensors b_io = TensorsOfRange(view_, d_, p, hi, view_.outputs);
        auto b = CutRegion(models.reference, models.target, b_io.inputs, b_io.outputs, known_);
        if (!b) {
          failure_ = b.error().message();
          continue;
        }
        Push(p, hi, b_io, {}, false);
        std::optional<RegionRun> b_run;
        PARITY_ASSIGN_OR_RETURN(bool found, Step(p, hi, *b, b_run));
        if (found) {
          Keep(p, hi, *b, b_run);
          return true;
        }
        n.steps.resize(depth);  // ORT fused across this cut: another
      }
      if (cuts.empty())
        note_ = fmt::format("no cut of the last {} nodes keeps ORT's fused groups whole", hi - lo);
      else
        note_ = fmt::format(
            "no sub-region of the last {} nodes ({} groups) reproduces its error on its own (ORT fuses across the "
            "cuts tried, or the error builds up over several groups){}; the smallest region that reproduces it is "
            "kept",
            hi - lo, CountGroups(d_, lo, hi), failure_.empty() ? "" : " (" + failure_ + ")");
    }
    if (!run) {  // entered unmeasured: does it reproduce at all?
      PARITY_ASSIGN_OR_RETURN(run, RunRegion(models, o_.reference, o_.target, o_.policy,
                                             fmt::format("{} sub-region {}..{}", o_.label, lo, hi), &n.sessions));
      ++n.sub_regions_run;
      if (!Reproduces(run->local)) return false;
      n.steps[depth - 1].local = run->local;
      n.steps[depth - 1].measured = true;
    }
    if (CountGroups(d_, lo, hi) <= 1) note_.clear();  // a note from a deeper failed search no longer applies
    n.note = note_;
    n.complete = CountGroups(d_, lo, hi) <= 1;
    final_ = {lo, hi};
    return true;
  }

 private:
  bool Reproduces(const ErrorSummary& e) const { return !e.pass && e.score >= threshold_; }

  // Called by the owner of a range's models once the search below it has
  // succeeded: when the range is the one the search ended on, its models and
  // run become the result's.
  void Keep(size_t lo, size_t hi, RegionModels& models, std::optional<RegionRun>& run) {
    if (final_ != std::pair{lo, hi} || kept_) return;
    kept_ = true;
    const RangeTensors io = TensorsOfRange(view_, d_, lo, hi, view_.outputs);
    result_.narrowed = true;
    result_.models = std::move(models);
    result_.run = std::move(*run);
    result_.inputs = io.inputs;
    result_.outputs = io.outputs;
  }

  void Push(size_t lo, size_t hi, const RangeTensors& io, const ErrorSummary& local, bool measured) {
    result_.narrowing.steps.push_back({.covers = NamesOf(view_, d_, lo, hi),
                                       .inputs = io.inputs,
                                       .outputs = io.outputs,
                                       .groups = CountGroups(d_, lo, hi),
                                       .measured = measured,
                                       .local = local});
  }

  const GraphView& view_;
  const DrillNodes& d_;
  const DrillOptions& o_;
  const double threshold_;
  TensorSet known_;  // reference values: the region's inputs and every cut tensor met so far
  DrillResult& result_;
  std::string failure_, note_;
  std::pair<size_t, size_t> final_{0, 0};
  bool kept_ = false;
  size_t span_ = 0;  // nodes of the region first entered
};

}  // namespace

Result<DrillResult> DrillDown(const RegionModels& region, const ErrorSummary& local, const DrillOptions& o,
                              int* sessions) {
  DrillResult result;
  LocateNarrowing& n = result.narrowing;
  PARITY_ASSIGN_OR_RETURN(GraphView view, BuildGraphView(region.reference, {.infer_shapes = false}));
  PARITY_ASSIGN_OR_RETURN(GraphView target_view, BuildGraphView(region.target, {.infer_shapes = false}));

  // 1. The groups: the target's plan of the region without layout renaming.
  RunConfig grouping = o.target;
  grouping.optimized_model_path.clear();
  if (PlansFromAssignment(grouping)) {
    // A compiling EP (OpenVINO) shows no groups of its own: CPU's fused
    // groups of the same region stand in for them (the halves still run on
    // the target's EP).
    grouping.providers = {"cpu"};
    grouping.provider_options.clear();
  }
  for (const auto& name : o.layout_optimizers)
    if (std::find(grouping.disabled_optimizers.begin(), grouping.disabled_optimizers.end(), name) ==
        grouping.disabled_optimizers.end())
      grouping.disabled_optimizers.push_back(name);
  PARITY_ASSIGN_OR_RETURN(FusionMap group_map, PlanOf(region.target, target_view, grouping,
                                                       o.label + " (groups)", o.scratch / "drill_groups.onnx"));
  ++n.sessions;
  const DrillNodes d = GroupNodes(view, group_map);
  n.steps.push_back({.covers = NamesOf(view, d, 0, d.nodes.size()),
                     .inputs = view.inputs,
                     .outputs = view.outputs,
                     .groups = CountGroups(d, 0, d.nodes.size()),
                     .local = local});
  n.complete = n.steps.back().groups <= 1;
  if (n.complete || local.pass) {
    if (sessions) *sessions += n.sessions;
    return result;
  }

  // 2-4. A range reproduces the region's error when it fails the tolerance
  // with a score of at least a quarter of the region's (capped at 1, the
  // band's edge): one failing only elementwise at rounding-noise level (values
  // of 1e7 whose rounding crosses zero) does not.
  Narrower narrower(view, d, o, std::min(1.0, local.score / 4), region.inputs, result);
  std::optional<RegionRun> unused;  // the region was measured by the caller
  unused.emplace();
  unused->local = local;
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] bool reproduced, narrower.Step(0, d.nodes.size(), region, unused));
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
