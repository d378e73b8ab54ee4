// Outputs whose rows form a set (issue 50; docs/compare.md "Set-valued
// outputs"): a detector's post-NMS boxes, scores and labels, TopK's
// indices. Compared element by element, one box more or less at the score
// threshold (a tie the two runs break differently) is a structural FAIL
// whatever it means (pytorch#134827, onnx#6322). Judged as sets instead:
//
//   rows    the group's outputs share their row axis (axis 0, or 1 after a
//           leading batch of 1): row i of every output is one element;
//   match   each reference row, highest score first, takes the unmatched
//           test row with equal integer parts (labels, indices), boxes of
//           IoU >= kMinIou where there are boxes, and every float part
//           within that output's band (the array comparison's, resolved on
//           the reference); the closest such row;
//   pass    every row matched, but for at most `index tolerance` rows
//           (max(1, 1% of the rows)) on each side, each of which is among
//           that many lowest-scored rows of its own set (a tie at the
//           threshold or at the count cap; a high-scored box missing is a
//           fault). Without a score output, the last rows.
//
// The unmatched rows are listed with their values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compare/tolerance.h"
#include "core/status.h"
#include "core/tensor.h"

namespace parity {

struct SetValuedGroup {
  std::string source;                // "NonMaxSuppression 'nms'", "TopK 'topk'"
  std::vector<std::string> outputs;  // by reference name
  std::string score;                 // the output that ranks rows ("" when none)
  std::string boxes;                 // rows of 4 box coordinates, matched by IoU ("" when none)
};

inline constexpr double kMinIou = 0.5;

struct SetMatch {
  int64_t reference_rows = 0, test_rows = 0, matched = 0, index_tolerance = 0;
  std::vector<std::string> unmatched;  // "reference row 41: labels 3, scores 0.0501, boxes [..]"
  bool passed = false;
  std::string Describe() const;  // "matched as a set: 41 of 42 rows; ..."
};

// Matches the group's rows of `reference` against `test` (both hold every
// output of the group). `bands`: each output's tolerance (by name; a
// missing one: the float32 default resolved on the reference).
// Errors: an output missing, or outputs of one side without a common row count.
Result<SetMatch> MatchRows(const SetValuedGroup& group, const TensorSet& reference, const TensorSet& test,
                           const std::vector<std::pair<std::string, Tolerance>>& bands);

}  // namespace parity
