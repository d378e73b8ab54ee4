// What every format of a check report says in its first lines, written once
// so that console, JSON, HTML and JUnit agree: what the model was judged
// against, and whether PyTorch was consulted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/check/check_result.h"

namespace parity {

// "torch" (a PyTorch dump), "reference_model" (--reference-model), or
// "config" (the same model under the reference config only).
std::string_view JudgedAgainstKind(const CheckReport& r);

// One line: "judged against: the PyTorch dump dump/ (6 samples) and the
// unfused run [disable]", or "... the same model under [disable] only;
// PyTorch was not consulted (give --torch DIR)".
std::string JudgedAgainst(const CheckReport& r);

// Where a failed test stands in the culprit-first order every format lists
// failures in (issue 54: one fault gave 8 failed tests, the root cause 7th):
// 0 the culprit named (numerics.locate.top_culprit, a torch first divergent
// layer), 1 what explains it (locate.model_difference, torch unexplained
// divergence), 2 where it shows first (locate.first_divergence, the other
// locate and layer findings, reference_model.tensors), 3 the symptoms (each
// output of each sample, everything else).
int CulpritRank(std::string_view finding_id);

struct FailedTest {
  const StageResult* stage;
  const CheckFinding* finding;
};
// CheckReport::FailedTests() with their stages, culprit first: by stage
// order, then CulpritRank, then as found.
std::vector<FailedTest> FailedTestsCulpritFirst(const CheckReport& r);

}  // namespace parity
