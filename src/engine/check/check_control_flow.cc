// ObserveControlFlow (check_internal.h): which branch of each If the check's
// samples took, and which bodies parity could not observe (docs/locate.md
// "Control flow"). A fault in a branch no sample takes cannot show in any
// verdict; the report says so instead of a silent PASS.
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>

#include "engine/check/check_internal.h"
#include "engine/torch/torch_compare.h"
#include "engine/torch/torch_dump.h"
#include "engine/run/flatten_control_flow.h"
#include "onnx/control_flow.h"

namespace parity::check_internal {
namespace {

// The least time all control-flow probes of a check get together.
constexpr double kProbeBudgetSeconds = 10;

// Whether `samples` (the report's) hold a judged result (WasJudged) for sample `name`.
bool Judged(const std::vector<SampleResult>& samples, const std::string& name) {
  return std::any_of(samples.begin(), samples.end(),
                     [&](const SampleResult& s) { return s.name == name && WasJudged(s); });
}

// With a PyTorch dump, the samples whose values can show a fault in a
// branch are the dump's own, judged against PyTorch (an export's fault shows
// nowhere else); without one, the check's samples judged against the ORT
// reference (ObserveControlFlow counts those as it probes them).
std::vector<Sample> TorchJudgedSamples(const Context& ctx, const std::vector<SampleResult>& judged) {
  std::vector<Sample> out;
  for (const TorchDump& dump : ctx.torch.Traced())
    for (const TorchDumpSample& s : dump.Samples()) {
      const std::string name = s.name == "traced" ? "torch" : "torch:" + s.name;
      if (!Judged(judged, name)) continue;
      auto dumped = LoadTorchFiles(dump, s.inputs);
      if (!dumped) continue;
      std::vector<std::string> names;
      for (const auto& in : ctx.subject.info.inputs) names.push_back(in.name);
      if (auto inputs = InputsForModel(*dumped, names, dump.dir.string()))
        out.push_back(Sample{name, std::move(*inputs)});
    }
  // A decode step judged against PyTorch's loop is such a sample too.
  out.insert(out.end(), ctx.torch.generation_samples.begin(), ctx.torch.generation_samples.end());
  return out;
}

// How a user gives the check a judged sample for a branch or a Loop body
// (docs/locate.md "Control flow"), in the judge's words.
std::string HowToJudge(int taken_unjudged, const BranchJudge& judge, bool loop) {
  std::string others;
  if (taken_unjudged > 0)
    others = fmt::format(" ({} sample(s) {} it, judged {})", taken_unjudged, loop ? "ran" : "took",
                         judge.others_judged);
  return others + (loop ? judge.hint_loop : judge.hint_branch);
}

// Every If branch and Loop body of `cf` that no judged sample reached, but
// branches that compute nothing of their own (BranchComputesNothing: a
// note instead).
std::vector<std::string> Unjudged(const Model& model, ControlFlowReport& cf, const BranchJudge& judge) {
  std::vector<std::string> out;
  for (const IfCoverage& c : cf.ifs) {
    for (const bool then : {true, false}) {
      const char* branch = then ? "then_branch" : "else_branch";
      if ((then ? c.then_judged : c.else_judged) != 0) continue;
      if (BranchComputesNothing(model, c.node, then)) {
        cf.notes.push_back(fmt::format("If '{}': its {} makes constants only (no number of its own): not needed "
                                       "for the verdict though no judged sample took it",
                                       c.node, branch));
        continue;
      }
      out.push_back(fmt::format("If '{}': no sample judged against {} took its {}: a difference there could not "
                                "show{}",
                                c.node, judge.name, branch,
                                HowToJudge(then ? c.then_samples : c.else_samples, judge, false)));
    }
  }
  for (const LoopCoverage& l : cf.loops)
    if (l.ran_judged == 0)
      out.push_back(fmt::format("Loop '{}': no sample judged against {} ran its body: a difference there could not "
                                "show{}",
                                l.node, judge.name, HowToJudge(l.ran_samples, judge, true)));
  return out;
}

// The check's samples probed for their branches within `deadline`; each
// counts as judged when its values were (with a dump, only PyTorch's count:
// ProbeTorchSamples). `judged`: the report's samples.
void ProbeCheckSamples(const Context& ctx, const std::vector<SampleResult>& judged, const BranchJudge& judge,
                       std::chrono::steady_clock::time_point deadline, ControlFlowReport& cf) {
  std::vector<std::string> refused, stopped, unprobed;
  for (const Sample& sample : ctx.subject.samples) {
    if (std::chrono::steady_clock::now() > deadline) {
      unprobed.push_back(sample.name);
      continue;
    }
    // A sample stopped at a limit is not run again for its branches.
    if (ctx.bounds.stopped.contains(sample.name)) {
      stopped.push_back(sample.name);
      continue;
    }
    auto flat = FlattenForSample(ctx.subject.model, sample, ctx.subject.label,
                                 {.probe = ctx.options.reference.config, .check_copy = false,
                                  .timeout_s = ctx.bounds.sample_timeout_s});
    if (!flat) {
      // A sample the model refuses (or a probe past the time limit) takes
      // no branch; its own verdict says why.
      refused.push_back(sample.name);
      continue;
    }
    AddSample(cf, *flat, judge.counts_check_samples && SampleKindOf(sample.name) != SampleKind::kAnomaly &&
                             Judged(judged, sample.name));
  }
  if (!refused.empty())
    cf.notes.push_back(fmt::format("{} sample(s) the model refused took no branch: {}", refused.size(),
                                   fmt::join(refused, ", ")));
  if (!unprobed.empty())
    cf.notes.push_back(fmt::format("{} sample(s) were not probed for their branches, past the probes' time budget of "
                                   "{:g} s: {}",
                                   unprobed.size(), std::max(kProbeBudgetSeconds, ctx.bounds.sample_timeout_s),
                                   fmt::join(unprobed, ", ")));
  if (!stopped.empty())
    cf.notes.push_back(fmt::format("{} sample(s) stopped at a limit (time or memory) were not probed for their branches: {}",
                                   stopped.size(), fmt::join(stopped, ", ")));
}

}  // namespace

ControlFlowReport ObserveControlFlow(const Context& ctx, const std::vector<SampleResult>& judged) {
  ControlFlowReport cf;
  if (!HasControlFlow(ctx.subject.model)) return cf;
  cf.present = true;
  const BranchJudge judge = BranchJudgeOf(ctx.torch);
  cf.judged_against = judge.name;
  // The probes are a report on coverage, not a verdict: they get one
  // sample's time limit in all (at least kProbeBudgetSeconds), whatever the
  // number of samples and levels of nesting (issue 56 class 2: each probe is
  // a session of a copy up to InlineLimits::max_nodes nodes, per level).
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(std::max(kProbeBudgetSeconds, ctx.bounds.sample_timeout_s)));
  ProbeCheckSamples(ctx, judged, judge, deadline, cf);
  // Coverage counts only the samples whose values were judged (issues 50,
  // 51): with a dump, a branch taken by generated samples judged between two
  // ORT configs says nothing of an export's fault, which only PyTorch shows.
  for (const Sample& sample : TorchJudgedSamples(ctx, judged)) {
    if (std::chrono::steady_clock::now() > deadline) break;  // their branches stay unjudged: NOT JUDGED, not PASS
    auto flat = FlattenForSample(ctx.subject.model, sample, ctx.subject.label,
                                 {.probe = ctx.options.reference.config, .check_copy = false,
                                  .timeout_s = ctx.bounds.sample_timeout_s});
    if (flat) AddSample(cf, *flat, /*judged=*/true);
  }
  NoteUntakenBranches(cf);
  cf.unjudged = Unjudged(ctx.subject.model, cf, judge);
  return cf;
}

}  // namespace parity::check_internal
