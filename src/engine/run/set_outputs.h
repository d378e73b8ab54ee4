// Which outputs of a model form sets (compare/set_valued.h): those a
// NonMaxSuppression's selected indices, or a TopK's outputs, flow into
// through row-selecting and elementwise ops only (Gather, Slice, Squeeze,
// Reshape, Concat, Cast, Mul, ...): a detector's post-NMS boxes, scores
// and labels, a model's top-k indices. An output that reaches them through
// arithmetic that mixes rows (a MatMul after a mixture-of-experts TopK) is
// an array, judged as one. The outputs of one such node form one group;
// its score is its float output of one value per row (TopK's values), its
// boxes its float output of four per row.
#pragma once

#include <vector>

#include "compare/set_valued.h"
#include "onnx/model.h"

namespace parity {

// Empty for a model without NonMaxSuppression or TopK at the top level
// (or whose graph cannot be read).
std::vector<SetValuedGroup> SetValuedOutputs(const Model& model);

}  // namespace parity
