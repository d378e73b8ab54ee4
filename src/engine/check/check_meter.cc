// The check's meter: each stage's seconds, each step's ORT runs
// (check_internal.h StepMeter, the report's `ort_runs`).
#include <algorithm>

#include "engine/check/check_internal.h"
#include "ort/run_count.h"

namespace parity::check_internal {

void StepMeter::MoveReferencePass() {
  const PassCost& pass = ctx_.reference.pass;
  for (StageResult& stage : report_.stages) {
    if (stage.name == "syntax") stage.seconds = std::max(0.0, stage.seconds - pass.seconds);
    if (stage.name == "numerics") stage.seconds += pass.seconds;
  }
  auto& runs = report_.ort_runs;
  if (pass.runs == 0) return;
  for (StepRuns& step : runs)
    if (step.step == "syntax") step.runs -= pass.runs;
  std::erase_if(runs, [](const StepRuns& step) { return step.runs <= 0; });
  runs.insert(runs.begin(), {.step = "reference pass", .runs = pass.runs});
}

// A step of a name already counted (numerics' deferred half) adds to it.
void StepMeter::Count(std::string_view name, int64_t since) {
  const int64_t n = ort::OrtRuns() - since;
  if (n <= 0) return;
  auto& runs = report_.ort_runs;
  auto it = std::find_if(runs.begin(), runs.end(), [&](const StepRuns& s) { return s.step == name; });
  if (it != runs.end())
    it->runs += n;
  else
    runs.push_back({std::string(name), n});
}

}  // namespace parity::check_internal
