// ObserveControlFlow (check_internal.h): which branch of each If the check's
// samples took, and which bodies parity could not observe (docs/locate.md
// "Control flow"). A fault in a branch no sample takes cannot show in any
// verdict; the report says so instead of a silent PASS.
#include <fmt/format.h>

#include "engine/check/check_internal.h"
#include "engine/run/control_flow.h"
#include "onnx/control_flow.h"

namespace parity::check_internal {

void ObserveControlFlow(Context& ctx) {
  if (!HasControlFlow(ctx.model)) return;
  ControlFlowReport& cf = ctx.report.control_flow;
  cf.present = true;
  std::vector<std::string> refused;
  for (const Sample& sample : ctx.samples) {
    auto flat = FlattenForSample(ctx.model, sample, ctx.label, {.probe = ctx.options.reference.config, .check_copy = false});
    if (!flat) {
      // A sample the model refuses takes no branch; its own verdict says why.
      refused.push_back(sample.name);
      continue;
    }
    AddSample(cf, *flat);
  }
  if (!refused.empty())
    cf.notes.push_back(fmt::format("{} sample(s) the model refused took no branch: {}", refused.size(),
                                   fmt::join(refused, ", ")));
  NoteUntakenBranches(cf);
}

}  // namespace parity::check_internal
