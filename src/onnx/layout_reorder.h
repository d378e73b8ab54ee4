// Reading a tensor ORT keeps in its NCHWc layout (engine/run/layout_alias.h)
// from the optimized model ORT saved: a ReorderOutput node of ORT's own
// (com.microsoft.nchwc) turns the blocked tensor back into NCHW, so the block
// size of the machine (8 channels on AVX2, 16 on AVX-512) is ORT's business,
// never parity's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "onnx/model.h"

namespace parity {

struct LayoutReorder {
  std::string blocked;  // the blocked tensor the optimized graph produces
  std::string name;     // the NCHW tensor to write (the original tensor it holds)
  int64_t channels = 0;  // its channel count (ORT's `channels` attribute: > 0)
};

// `m` with one ReorderOutput node per entry, appended to its main graph (ORT
// sorts nodes itself). Errors: kInvalidArgument for channels <= 0, kNotFound
// for a blocked tensor no node produces, kInvalidArgument for a name the graph
// already produces.
Result<Model> WithLayoutReorders(const Model& m, const std::vector<LayoutReorder>& reorders);

}  // namespace parity
