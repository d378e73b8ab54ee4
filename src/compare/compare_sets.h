// Comparison of two tensor sets: structure first (names matched exactly,
// renamed only through an explicit map), then per-tensor metrics judged with
// a resolved tolerance. The result is plain data that knows whether it passed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/judge.h"
#include "compare/metrics.h"
#include "compare/set_valued.h"
#include "compare/tolerance.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

struct StructuralFinding {
  enum class Kind { kMissingInTest, kExtraInTest, kShapeMismatch, kDTypeMismatch, kUnknownMapName };
  Kind kind;
  std::string name;       // reference-side name (test-side for kExtraInTest)
  std::string reference;  // what the reference has, e.g. "float32 [1, 10]" or "absent"
  std::string test;       // what the test has
  bool fatal = true;      // whether it fails the comparison
};
std::string_view FindingKindName(StructuralFinding::Kind k);  // "missing", "extra", "shape", "dtype", "map"

// The one verdict of parity: a tensor's, and a check's stage, finding and
// sample (where kUnchecked reads "skipped").
enum class Verdict { kPass, kFail, kUnchecked };
std::string_view VerdictName(Verdict v);       // "pass", "fail", "unchecked": a tensor's
std::string_view CheckVerdictName(Verdict v);  // "PASS", "FAIL", "SKIPPED": a check report's words
// A whole check's or dataset's verdict: "PASS", "FAIL", "NOT JUDGED" (its
// coverage cannot support a PASS; exit 4).
std::string_view OverallVerdictName(Verdict v);

struct TensorComparison {
  std::string name;       // reference name
  std::string test_name;  // differs only through the rename map
  Verdict status = Verdict::kUnchecked;
  std::string reason;     // why it failed or was not checked; empty on pass
  TensorMetrics metrics;  // valid unless unchecked
  ResolvedTolerance tolerance;
  double score = 0;       // the judge's (JudgedTensor::score); the report reads it, never recomputes it
};

// A judgment into a report's row (a TensorComparison, a LayerVerdict): its
// metrics, band, score and reason, and its verdict by the one predicate,
// JudgedTensor::passed().
template <class Row>
void TakeJudgment(Row& row, JudgedTensor&& j) {
  row.status = j.passed() ? Verdict::kPass : Verdict::kFail;
  row.metrics = std::move(j.metrics);
  row.tolerance = std::move(j.tolerance);
  row.score = j.score;
  row.reason = std::move(j.reason);
}

struct SetComparison {
  std::vector<StructuralFinding> findings;
  std::vector<TensorComparison> tensors;  // in reference order
  bool passed() const;
};

struct CompareOptions {
  TolerancePolicy policy;
  // --map A=B: reference tensor A is compared with test tensor B.
  std::map<std::string, std::string> rename;
  // Second reference for the calibrated mode (same names as the reference).
  const TensorSet* noise_reference = nullptr;
  // Each output's conditioning spread for this sample (JudgeOptions::
  // conditioning; tolerance.h ApplyConditioningFloor), by reference name.
  const TensorSet* conditioning = nullptr;
  // Outputs whose rows form a set (set_valued.h): when any of a group's
  // outputs fails element by element (or changes its row count), the group
  // is matched row by row as a set and passes or fails as one.
  std::vector<SetValuedGroup> set_groups;
  bool allow_extra_in_test = false;    // extra test tensors are reported but do not fail
  bool allow_dtype_change = false;     // a dtype difference is reported but does not fail
  // An output whose reference mixes scales along an axis is judged slice by
  // slice (JudgeOptions::slice_bands; compare/slice_bands.h).
  bool slice_bands = true;
  int threads = 0;
};

// Parses "A=B" (the --map option). Invalid argument when malformed.
Result<std::pair<std::string, std::string>> ParseRename(std::string_view spec);

// Never fails on data differences (those are findings); returns an error only
// for an invalid policy. Thread-compatible.
Result<SetComparison> CompareSets(const TensorSet& reference, const TensorSet& test, const CompareOptions& options);

}  // namespace parity
