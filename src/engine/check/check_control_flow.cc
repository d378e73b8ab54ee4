// ObserveControlFlow (check_internal.h): which branch of each If the check's
// samples took, and which bodies parity could not observe (docs/locate.md
// "Control flow"). A fault in a branch no sample takes cannot show in any
// verdict; the report says so instead of a silent PASS.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "engine/check/check_internal.h"
#include "engine/run/control_flow.h"
#include "onnx/control_flow.h"

namespace parity::check_internal {

void ObserveControlFlow(Context& ctx) {
  if (!HasControlFlow(ctx.model)) return;
  ControlFlowReport& cf = ctx.report.control_flow;
  cf.present = true;
  std::vector<std::string> refused, stopped;
  for (const Sample& sample : ctx.samples) {
    // A sample stopped at the time limit is not run again for its branches.
    if (std::any_of(ctx.report.samples.begin(), ctx.report.samples.end(),
                    [&](const SampleResult& s) { return s.name == sample.name && s.timed_out; })) {
      stopped.push_back(sample.name);
      continue;
    }
    auto flat = FlattenForSample(ctx.model, sample, ctx.label,
                                 {.probe = ctx.options.reference.config, .check_copy = false,
                                  .timeout_s = ctx.sample_timeout_s});
    if (!flat) {
      // A sample the model refuses (or a probe past the time limit) takes
      // no branch; its own verdict says why.
      refused.push_back(sample.name);
      continue;
    }
    AddSample(cf, *flat);
  }
  if (!refused.empty())
    cf.notes.push_back(fmt::format("{} sample(s) the model refused took no branch: {}", refused.size(),
                                   fmt::join(refused, ", ")));
  if (!stopped.empty())
    cf.notes.push_back(fmt::format("{} sample(s) stopped at the time limit were not probed for their branches: {}",
                                   stopped.size(), fmt::join(stopped, ", ")));
  NoteUntakenBranches(cf);
}

}  // namespace parity::check_internal
