// One session for both configs when the target's plan is the reference's
// (check_reference_same_plan.cc): a config of MODEL that differs from the target's only
// in its optimizations, none of which changes this model's graph, runs the
// same kernels on the same graph, so its values are the target's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/check/check_internal.h"
#include "engine/runner/runner.h"

namespace parity::check_internal {

// Whether the reference config and the target differ only in their graph
// optimizations (level, disabled optimizers): both on the process's ORT's
// CPU EP alone, the reference MODEL itself, the same threads, execution mode
// and session entries, neither saving an optimized model.
bool DiffersOnlyInOptimizations(const CheckOptions& o);

// When the configs qualify and a cheap probe of each optimizing config
// (prepacking off, ORT's optimizer log captured) finds no optimizer
// modifying the graph: the target's session, loaded once, as the runner the
// reference's pass runs on and the target keeps afterwards (its load and the
// probe's evidence in `f`, the report's note in `notes`; each sample then
// runs once, its values both sides', TargetRun). Null otherwise: the check
// loads two sessions, one after the other, as before.
std::unique_ptr<Runner> LoadSharedSession(Context& ctx, std::vector<CheckFinding>& f,
                                          std::vector<std::string>& notes);

}  // namespace parity::check_internal
