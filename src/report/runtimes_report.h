// The `runtimes` part of a locate report over two ONNX Runtime releases
// (engine/locate/runtime_diff_result.h): JSON and console lines, and the
// runner fact (engine/runner/runner.h) every report writes the same way.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/locate/runtime_diff_result.h"
#include "engine/runner/runner.h"

namespace parity {

// {"kind", "ort": {"version", "library", "origin"}, "config": {...}, "source"?}
nlohmann::json RanWhatToJson(const RanWhat& ran);
// {"reference": RanWhat, "target": RanWhat, "plans_identical", "reference_fused",
//  "target_fused", "only_reference": [{"name", "op_type", "covers"}], "only_target": [...]}
nlohmann::json RuntimesToJson(const RuntimeComparison& runtimes);
// "reference runtime: onnxruntime 1.29.0 (/path)", the target's, then the
// plans: "plans: identical (N fused nodes)" or one line per fusion only one makes.
std::vector<std::string> RuntimeLines(const RuntimeComparison& runtimes);

// `parity env --runtime PATH`: each runtime it was given, as [{"version",
// "library", "origin"}] (the env JSON's `runtimes`), and one console line each.
nlohmann::json OrtFactsToJson(const std::vector<OrtFact>& runtimes);
std::string FormatRuntimes(const std::vector<OrtFact>& runtimes);

}  // namespace parity
