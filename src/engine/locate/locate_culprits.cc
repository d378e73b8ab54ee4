// Stages 4-6 of locate: suspects' local and inherited errors, ranking,
// ablation of the top culprits, and the reproduction directory.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/run/arithmetic.h"
#include "engine/run/environment.h"
#include "engine/locate/ablation.h"
#include "engine/locate/drilldown.h"
#include "engine/locate/local_error.h"
#include "engine/locate/locate_internal.h"
#include "engine/locate/repro.h"
#include "engine/quant/cast.h"
#include "engine/runner/runner.h"

namespace parity::locate_internal {

namespace {

struct Suspect {
  size_t region = 0;
  double out_score = 0;
  double in_score = 0;
  bool failing = false;
};

// The report's row of an observed tensor; null when it was not observed.
const LocateTensor* RowOf(const Context& ctx, const std::string& tensor) {
  auto it = ctx.tensor_row.find(tensor);
  return it == ctx.tensor_row.end() ? nullptr : &ctx.report.tensors[it->second];
}

double ScoreOf(const Context& ctx, const std::string& tensor) {
  const LocateTensor* row = RowOf(ctx, tensor);
  return row ? row->score : 0;
}

// A checked row's error as a summary (the row must have metrics).
ErrorSummary SummaryOf(const std::string& tensor, const LocateTensor& e) {
  return {.tensor = tensor,
          .max_abs = e.metrics->max_abs,
          .max_rel = e.metrics->max_rel,
          .mismatches = e.metrics->mismatches,
          .score = e.score,
          .pass = e.status != Verdict::kFail,
          .snr_db = e.metrics->snr_db};
}

std::string RegionLabel(const LocateOptions& o, const std::string& fused_node) {
  return fmt::format("{} region '{}'", o.model_label, fused_node);
}

// The region of the first divergence first; then regions whose outputs fail
// or carry a tenth of the tolerance, by how much they grow the error they
// receive.
std::vector<size_t> PickSuspects(const Context& ctx) {
  const FusionMap& map = ctx.plan.map;
  const FusedRegion* first = map.RegionOf(ctx.report.first_divergence->tensor);
  std::vector<Suspect> all;
  for (size_t i = 0; i < map.regions.size(); ++i) {
    const auto& r = map.regions[i];
    Suspect s{.region = i};
    for (const auto& t : r.outputs) {
      s.out_score = std::max(s.out_score, ScoreOf(ctx, t));
      const LocateTensor* row = RowOf(ctx, t);
      s.failing |= row != nullptr && row->status == Verdict::kFail;
    }
    for (const auto& t : r.boundary) s.in_score = std::max(s.in_score, ScoreOf(ctx, t));
    if (&r == first || s.failing || s.out_score >= 0.1) all.push_back(s);
  }
  const auto growth = [](const Suspect& s) { return s.out_score / std::max(s.in_score, 1e-3); };
  std::stable_sort(all.begin(), all.end(), [&](const Suspect& a, const Suspect& b) {
    const bool a_first = &ctx.plan.map.regions[a.region] == first, b_first = &ctx.plan.map.regions[b.region] == first;
    if (a_first != b_first) return a_first;
    return growth(a) > growth(b);
  });
  std::vector<size_t> picked;
  for (const auto& s : all)
    if (picked.size() < std::max<size_t>(1, ctx.options.max_suspects)) picked.push_back(s.region);
  return picked;
}

// The region's local error read off the observed trace, when that trace
// already fed it the reference's values: every boundary input is a graph
// input or an observed tensor equal to the reference's (max_abs 0, NaN and
// Inf where the reference has them). The target then computed exactly the
// region fed reference inputs, and running it again on its own (two
// sessions of a region that may be most of the model) adds nothing.
// Nullopt when some input differs or an output was not observed.
std::optional<ErrorSummary> LocalFromTrace(const Context& ctx, const FusedRegion& r) {
  for (const auto& t : r.boundary) {
    if (std::find(ctx.reference_view.inputs.begin(), ctx.reference_view.inputs.end(), t) !=
        ctx.reference_view.inputs.end())
      continue;
    const LocateTensor* e = RowOf(ctx, t);
    if (e == nullptr || !e->metrics || e->metrics->max_abs != 0 || e->metrics->nan_mismatch != 0 ||
        e->metrics->inf_mismatch != 0)
      return std::nullopt;
  }
  ErrorSummary worst;
  for (const auto& t : r.outputs) {
    const LocateTensor* e = RowOf(ctx, t);
    if (e == nullptr || !e->metrics) return std::nullopt;
    KeepWorst(worst, SummaryOf(t, *e));
  }
  if (worst.tensor.empty()) return std::nullopt;
  return worst;
}

ErrorSummary Inherited(const Context& ctx, const FusedRegion& r) {
  ErrorSummary worst;
  for (const auto& t : r.boundary) {
    const LocateTensor* e = RowOf(ctx, t);
    if (e == nullptr) {  // a graph input: the reference's own values
      KeepWorst(worst, {.tensor = t});
      continue;
    }
    if (e->metrics) KeepWorst(worst, SummaryOf(t, *e));
  }
  return worst;
}

// The worst final output of `outputs` against the reference's.
Result<ErrorSummary> OutputError(const Context& ctx, const TensorSet& outputs) {
  ErrorSummary worst;
  for (const auto& [name, ref] : ctx.reference_outputs) {
    const Tensor* t = outputs.Find(name);
    if (t == nullptr) continue;
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, ref, *t, ctx.options.policy));
    KeepWorst(worst, Summarize(name, j));
  }
  return worst;
}

struct Measured {
  LocateCulprit culprit;
  std::optional<RegionModels> models;
  std::optional<RegionRun> run;
  const FusedRegion* region = nullptr;
  // When narrowed: the last step's group as ORT plans it on its own, and
  // that sub-model's view (ablation then runs on the group).
  std::optional<FusedRegion> group;
  GraphView group_view;
};

// More than one computing optimized node: the region may hold several fused
// groups (an NCHWc chain), worth a drill-down.
bool MayHoldSeveralGroups(const FusedRegion& r) {
  // A subgraph a compiling EP took (OpenVINO) is one node over many.
  for (const auto& op : r.op_types)
    if (op.ends_with("ExecutionProvider")) return r.covers.size() > 1;
  size_t computing = 0;
  for (const auto& op : r.op_types)
    computing += op != "ReorderInput" && op != "ReorderOutput" && op != "Reshape" && op != "Transpose" &&
                 op != "Squeeze" && op != "Unsqueeze" && op != "Identity" && op != "Cast";
  return computing > 1 && r.covers.size() > 1;
}

// Narrows the culprit `m` (docs/locate.md "Drill-down"); on success its
// region, models and run become the last step's.
Status Narrow(Context& ctx, Measured& m) {
  const auto& o = ctx.options;
  DrillOptions drill{.reference = o.reference,
                     .target = o.target,
                     .policy = o.policy,
                     .label = RegionLabel(o, m.culprit.fused_node),
                     .scratch = ctx.scratch};
  // A sub-region ORT refuses costs the narrowing, not the report.
  auto drilled = DrillDown(*m.models, m.culprit.local, drill, &ctx.report.sessions_created);
  if (!drilled) {
    m.culprit.note = "not narrowed: " + drilled.error().message();
    return {};
  }
  DrillResult& d = *drilled;
  if (!d.narrowed) {
    if (d.narrowing.sub_regions_run > 0) m.culprit.narrowing = std::move(d.narrowing);  // tried: say why not
    return {};
  }
  const size_t region_nodes = m.culprit.covers.size();
  ctx.report.notes.push_back(fmt::format(
      "the target's fused region '{}' covers {} original nodes ({} fused groups), too large to observe "
      "directly (ORT renames the tensors inside it); narrowed to {} node(s) by running sub-regions on their "
      "own: see the culprit's narrowing",
      m.culprit.fused_node, region_nodes, d.narrowing.steps.front().groups, d.narrowing.steps.back().covers.size()));
  LocateCulprit& c = m.culprit;
  c.covers = d.narrowing.steps.back().covers;
  c.inputs = d.inputs;
  c.outputs = d.outputs;
  c.local = d.run.local;
  if (!d.group.nodes.empty()) {
    c.fused_node = d.group.nodes[d.group.MainNode()];
    c.op_type = d.group.OpSummary();
    c.fused = !d.group.unchanged;
    // A compiling EP names its subgraph, not a node: name the group's
    // first node inside it instead, and keep the EP as its op.
    if (c.op_type.ends_with("ExecutionProvider") && !c.covers.empty())
      c.fused_node = c.covers.front();
  }
  c.inherited = {};  // the cut tensors are not observed in the target trace
  for (const auto& t : c.inputs)
    if (const LocateTensor* e = RowOf(ctx, t); e != nullptr && e->metrics) KeepWorst(c.inherited, SummaryOf(t, *e));
  c.narrowing = std::move(d.narrowing);
  m.models = std::move(d.models);
  m.run = std::move(d.run);
  m.group = std::move(d.group);
  m.group_view = std::move(d.target_view);
  m.region = &*m.group;
  return {};
}

// The phrase a culprit's ablation note starts with when the error is the
// models' own (docs/locate.md): no optimizer is named then.
constexpr std::string_view kModelsDiffer = "present with optimizations off: the models differ here";

Status Ablate(Context& ctx, Ablator& ablator, Measured& m) {
  LocateAblation a;
  a.tried = ablator.tried();
  if (&ctx.reference_model != &ctx.target_model && m.models) {
    // A derived target: first ask whether the error needs any optimizer at
    // all. With every one off (the reference's config on both sides) only
    // the models' own difference is left; an optimizer is no cause then.
    PARITY_ASSIGN_OR_RETURN(RegionRun off, RunRegion(*m.models, ctx.options.reference, ctx.options.reference,
                                                     ctx.options.policy, RegionLabel(ctx.options, m.culprit.fused_node),
                                                     &ctx.report.sessions_created));
    if (!off.local.pass) {
      a.local_with = m.culprit.local;
      a.local_without = off.local;
      a.note = fmt::format("{} (local error {:.3g} x tolerance with every optimizer off, {:.3g} with them on)",
                           kModelsDiffer, off.local.score, m.culprit.local.score);
      m.culprit.ablation = std::move(a);
      return {};
    }
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<std::string> producers, ablator.Producers(*m.region));
  if (producers.empty()) {
    a.note = a.tried.empty() ? "ORT logged no optimizer that changed the graph"
                             : "switching off any one logged optimizer leaves this fused node in place";
    m.culprit.ablation = std::move(a);
    return {};
  }
  a.optimizer = producers.front();
  a.also_removing.assign(producers.begin() + 1, producers.end());
  const RunConfig without = ablator.Without(a.optimizer);
  const std::string label = ctx.options.model_label + " (-" + a.optimizer + ")";
  const Sample fed = FitToGraph(ctx.target_view, ctx.sample);  // a float16 target without keep_io_types
  // Each config's session kept for its timed runs (its CPU arena on, as a
  // deployed session's), and released before the next is made.
  const auto timed = [&](const std::string& name) {
    return RunnerJob{.model = name, .loaded = &ctx.target_model, .keep_session = true, .sample = fed.name,
                     .cpu_mem_arena = true};
  };
  {
    auto runner = MakeSessionRunner(without);
    PARITY_ASSIGN_OR_RETURN(TensorSet outs, runner->Run(timed(label), fed.tensors));
    ++ctx.report.sessions_created;
    PARITY_ASSIGN_OR_RETURN(a.output_with, OutputError(ctx, ctx.target_outputs));
    PARITY_ASSIGN_OR_RETURN(a.output_without, OutputError(ctx, outs));
    PARITY_ASSIGN_OR_RETURN(a.latency_ms_without,
                            MedianLatencyMs(*runner, timed(label), fed.tensors, ctx.options.latency_runs));
  }
  // The untouched target's session was released after its run (KeepUntouched):
  // it is timed again from a fresh one, created once the ablated one is gone.
  RunConfig with = ctx.options.target;
  with.optimized_model_path.clear();
  {  // released before the region's sessions below: one alive at a time
    auto untouched = MakeSessionRunner(with);
    PARITY_RETURN_IF_ERROR(untouched->Prepare(timed(ctx.options.model_label)));
    ++ctx.report.sessions_created;
    PARITY_ASSIGN_OR_RETURN(a.latency_ms_with, MedianLatencyMs(*untouched, timed(ctx.options.model_label), fed.tensors,
                                                               ctx.options.latency_runs));
  }
  a.local_with = m.culprit.local;
  if (m.models) {
    PARITY_ASSIGN_OR_RETURN(RegionRun r, RunRegion(*m.models, ctx.options.reference, without, ctx.options.policy,
                                                   label, &ctx.report.sessions_created));
    a.local_without = r.local;
  }
  m.culprit.ablation = std::move(a);
  return {};
}

// A suspect's culprit entry: its local error (read off the trace when the
// trace fed it the reference's inputs, else run on its own) and the error it
// inherits.
Result<Measured> MeasureSuspect(Context& ctx, const FusedRegion& r) {
  const auto& o = ctx.options;
  Measured m;
  m.region = &r;
  m.culprit = {.fused_node = r.nodes[r.MainNode()],
               .op_type = r.OpSummary(),
               .fused = !r.unchanged,
               .covers = r.covers,
               .inputs = r.boundary,
               .outputs = r.outputs};
  m.culprit.inherited = Inherited(ctx, r);
  auto models = CutRegion(ctx.reference_model, ctx.target_model, r.boundary, r.outputs, ctx.reference_values);
  if (!models) {
    m.culprit.note = "local error not measured: " + models.error().message();
  } else if (auto traced = LocalFromTrace(ctx, r)) {
    m.culprit.local = *traced;  // the run is made only if a reproduction needs it
    m.models = std::move(*models);
  } else {
    PARITY_ASSIGN_OR_RETURN(RegionRun run, RunRegion(*models, o.reference, o.target, o.policy,
                                                     RegionLabel(o, m.culprit.fused_node),
                                                     &ctx.report.sessions_created));
    m.culprit.local = run.local;
    m.models = std::move(*models);
    m.run = std::move(run);
  }
  return m;
}

// Ablates the first max_ablated fused culprits, in rank order.
Status AblateCulprits(Context& ctx, std::vector<Measured>& measured) {
  const auto& o = ctx.options;
  const RunConfig target = o.target;
  Ablator ablator(ctx.target_model, ctx.target_view, target, ctx.plan.modified_optimizers, ctx.scratch,
                  o.model_label, &ctx.report.sessions_created);
  size_t done = 0;
  for (auto& m : measured) {
    if (done >= o.max_ablated) break;
    if (!m.culprit.fused) continue;
    if (m.group) {  // a narrowed group: its own sub-model's plans
      Ablator own(m.models->target, m.group_view, target, ctx.plan.modified_optimizers, ctx.scratch,
                  o.model_label + " (group)", &ctx.report.sessions_created);
      PARITY_RETURN_IF_ERROR(Ablate(ctx, own, m));
    } else {
      PARITY_RETURN_IF_ERROR(Ablate(ctx, ablator, m));
    }
    ++done;
  }
  return {};
}

// Writes the top culprit's region as a reproduction (running it first when
// its local error was read off the trace), or notes why none was written.
Status WriteReproduction(Context& ctx, std::vector<Measured>& measured) {
  const auto& o = ctx.options;
  if (!measured.empty() && measured.front().models && !measured.front().run) {
    auto& top = measured.front();
    PARITY_ASSIGN_OR_RETURN(top.run, RunRegion(*top.models, o.reference, o.target, o.policy,
                                               RegionLabel(o, top.culprit.fused_node), &ctx.report.sessions_created));
  }
  if (measured.empty() || !measured.front().run) {
    ctx.report.notes.push_back("no reproduction written: no culprit's region could be run on its own");
    return {};
  }
  const auto& top = measured.front();
  ReproContent content{.region = &*top.models,
                       .run = &*top.run,
                       .culprit = &top.culprit,
                       .reference = o.reference,
                       .target = o.target,
                       .separate_target_model = &ctx.target_model != &ctx.reference_model,
                       .source_model = o.model_label};
  PARITY_RETURN_IF_ERROR(WriteRepro(o.repro_dir, content));
  ctx.report.repro = o.repro_dir.string();
  return {};
}

}  // namespace

Status FindCulprits(Context& ctx) {
  const auto& o = ctx.options;
  std::vector<Measured> measured;
  for (size_t index : PickSuspects(ctx)) {
    PARITY_ASSIGN_OR_RETURN(Measured m, MeasureSuspect(ctx, ctx.plan.map.regions[index]));
    if (m.culprit.HasError()) {
      measured.push_back(std::move(m));
      continue;
    }
    // Measured with no local and no inherited error: not the cause of anything.
    ctx.report.notes.push_back(fmt::format("suspect '{}' ({}) was measured without any error (local and inherited "
                                           "0): not a culprit",
                                           m.culprit.fused_node, m.culprit.op_type));
  }
  std::stable_sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
    return a.culprit.local.score > b.culprit.local.score;
  });
  // The top culprit, when it changes the numbers on its own and may hold
  // several fused groups, is narrowed to the group that does.
  if (o.drilldown && !measured.empty() && measured.front().models && !measured.front().culprit.local.pass &&
      MayHoldSeveralGroups(*measured.front().region))
    PARITY_RETURN_IF_ERROR(Narrow(ctx, measured.front()));
  if (o.ablation) PARITY_RETURN_IF_ERROR(AblateCulprits(ctx, measured));
  if (!o.repro_dir.empty()) PARITY_RETURN_IF_ERROR(WriteReproduction(ctx, measured));
  for (auto& m : measured) ctx.report.culprits.push_back(std::move(m.culprit));
  ctx.report.arithmetic = DiagnoseArithmetic(GatherArithmeticEvidence(ctx), ctx.report.target, CurrentEnvironment());
  return {};
}

}  // namespace parity::locate_internal
