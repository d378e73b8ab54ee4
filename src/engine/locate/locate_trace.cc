// Steps 2 and 3 of Locate: the reference and the target runs, observed, in
// rounds on long graphs (locate_internal.h).
#include <fmt/format.h>

#include <algorithm>

#include "compare/judge.h"
#include "engine/locate/locate_internal.h"
#include "engine/quant/cast.h"
#include "engine/runner/session_run.h"

namespace parity::locate_internal {

namespace {

// Step 2: the reference run, observed.
Result<ReferenceTrace> TraceReference(const NamedModels& m, const LocatePlan& p, const Sample& sample,
                                      const LocateOptions& o, const std::filesystem::path& scratch,
                                      LocateReport& report) {
  ReferenceTrace trace{.values = sample.tensors};
  const auto keep = [&](const std::string& name, const Tensor& t) -> Status {
    trace.values.Set(name, t);
    return {};
  };
  const std::string label = o.model_label + " (reference)";
  if (!p.reference && o.reference_values) {
    const auto given = [&](const std::string& name) { return o.reference_values->Contains(name); };
    if (std::all_of(p.round.begin(), p.round.end(), given) &&
        std::all_of(m.reference_view.outputs.begin(), m.reference_view.outputs.end(), given)) {
      for (const auto& name : p.round) trace.values.Set(name, *o.reference_values->Find(name));
      for (const auto& name : m.reference_view.outputs) trace.outputs.Set(name, *o.reference_values->Find(name));
      return trace;
    }
  }
  if (p.reference) {
    PARITY_ASSIGN_OR_RETURN(
        Observation obs,
        ObserveTarget({.plan = *p.reference, .exposed = p.reference_exposed, .view = m.reference_view,
                       .config = o.reference, .tensors = p.round, .scratch = scratch, .label = label},
                      sample, keep));
    report.sessions_created += obs.sessions;
    trace.outputs = std::move(obs.untouched_outputs);
    for (auto& n : obs.notes) report.observer_notes.push_back("reference: " + n);
    return trace;
  }
  PARITY_ASSIGN_OR_RETURN(TensorSet outs, ObserveUnoptimized(p.reference_exposed, o.reference, p.round, sample,
                                                             label, keep, &report.sessions_created));
  for (const auto& info : m.reference_view.outputs)
    if (const Tensor* t = outs.Find(info)) trace.outputs.Set(info, *t);
  return trace;
}

// Step 3: the target run, observed and compared tensor by tensor as it
// arrives. Returns the untouched target's final outputs.
Result<TensorSet> TraceTarget(const NamedModels& m, const LocatePlan& p, const Sample& sample,
                              const TensorSet& reference_values, const LocateOptions& o,
                              const std::filesystem::path& scratch, LocateReport& report) {
  const auto compare = [&](const std::string& name, const Tensor& test) -> Status {
    LocateTensor& entry = report.tensors[p.row.at(name)];
    const Tensor* ref = reference_values.Find(name);
    if (ref == nullptr) {
      entry.reason = "no reference value";
      return {};
    }
    PARITY_ASSIGN_OR_RETURN(JudgedTensor j, JudgeTensor(name, *ref, test, o.policy));
    entry.status = j.passed() ? Verdict::kPass : Verdict::kFail;
    entry.reason = j.reason;
    entry.metrics = j.metrics;
    entry.tolerance = j.tolerance.tolerance;
    entry.score = j.score;
    return {};
  };
  PARITY_ASSIGN_OR_RETURN(
      Observation obs,
      ObserveTarget({.plan = p.target, .exposed = p.target_exposed(), .view = m.target_view(), .config = o.target,
                     .tensors = p.round, .scratch = scratch, .label = m.target_label, .options = o.observe},
                    FitToGraph(m.target_view(), sample), compare));
  report.sessions_created += obs.sessions;
  report.observer_check = obs.observer_check;
  report.observer_mode = ObserverModeName(obs.mode);
  for (auto& n : obs.notes) report.observer_notes.push_back(std::move(n));
  return std::move(obs.untouched_outputs);
}

// The indexes a round observes of the window [lo, hi): all when they fit in
// `k`, else every step-th one, the window's last included.
std::vector<size_t> RoundOf(size_t lo, size_t hi, size_t k) {
  std::vector<size_t> out;
  if (hi - lo <= k) {
    for (size_t i = lo; i < hi; ++i) out.push_back(i);
    return out;
  }
  const size_t step = (hi - lo + k - 1) / k;
  for (size_t i = hi - 1;; i -= step) {
    out.push_back(i);
    if (i < lo + step) break;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

// Steps 2 and 3 in rounds of at most max_observed exposed tensors (docs/locate.md
// "Long graphs"). When every observed tensor fits, one round observes them
// all. Else a round observes every step-th tensor of the window (in the
// reference's topological order), and the next round the window from the last
// of them that passed to the first that failed, until a window fits whole: a
// graph of N tensors costs about log(N)/log(max_observed) observed runs of each
// side, none with more than max_observed extra outputs, instead of one run
// exposing N. It assumes an error shows in the tensors downstream of it (exact
// on a chain); a departure that no later sampled tensor sees can be missed.
Result<Traced> TraceInRounds(const NamedModels& m, LocatePlan& p, const Sample& sample, const LocateOptions& o,
                             const std::filesystem::path& scratch, LocateReport& report) {
  // The untouched sessions run first and are released: every observing
  // session is then created with no other alive (one copy of the weights).
  PARITY_RETURN_IF_ERROR(KeepUntouched(p.target, FitToGraph(m.target_view(), sample), m.target_label));
  if (p.reference) PARITY_RETURN_IF_ERROR(KeepUntouched(*p.reference, sample, o.model_label + " (reference)"));
  const size_t k = std::max<size_t>(o.max_observed, 16);  // a window shrinks each round
  size_t lo = 0, hi = p.observed.size(), rounds = 0;
  std::vector<bool> seen(p.observed.size(), false);
  Traced t;
  for (;;) {
    const std::vector<size_t> idx = RoundOf(lo, hi, k);
    std::vector<std::string> names;
    for (size_t i : idx) {
      names.push_back(p.observed[i]);
      seen[i] = true;
    }
    PARITY_RETURN_IF_ERROR(Expose(m, p, std::move(names), o));
    PARITY_ASSIGN_OR_RETURN(t.reference, TraceReference(m, p, sample, o, scratch, report));
    PARITY_ASSIGN_OR_RETURN(t.target_outputs, TraceTarget(m, p, sample, t.reference.values, o, scratch, report));
    ++rounds;
    if (idx.size() == hi - lo) break;
    const auto fail = std::find_if(idx.begin(), idx.end(), [&](size_t i) {
      return report.tensors[p.row.at(p.observed[i])].status == Verdict::kFail;
    });
    if (fail == idx.end()) break;  // no observed tensor departs
    hi = *fail + 1;
    if (fail != idx.begin()) lo = *(fail - 1);
  }
  if (rounds == 1) return t;
  size_t observed = 0;
  for (size_t i = 0; i < seen.size(); ++i) {
    observed += seen[i];
    if (!seen[i]) report.tensors[p.row.at(p.observed[i])].reason = "not observed (a long graph is searched in rounds)";
  }
  report.observer_notes.push_back(fmt::format(
      "{} of {} surviving tensors observed, in {} rounds of at most {} (a graph above {} surviving tensors is "
      "searched for its first divergence, not observed whole)",
      observed, p.observed.size(), rounds, k, k));
  return t;
}

}  // namespace parity::locate_internal
