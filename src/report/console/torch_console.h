// The console text of a PyTorch comparison (`parity align`): the layer table
// and the summary lines under it. Its JSON is report/json/torch_json.h.
#pragma once

#include <string>

#include "engine/torch/torch_compare.h"

namespace parity {

// One row per aligned leaf layer (every layer with `all_layers`): module,
// how it was aligned, status, ONNX tensor, max_abs or the reason.
std::string FormatAlignTable(const TorchComparison& c, bool all_layers);

// The alignment line with pass/fail counts, the verdict line, then each
// failing output and each output finding.
std::string FormatAlignSummary(const TorchComparison& c);

}  // namespace parity
