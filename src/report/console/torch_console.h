// The console text of a PyTorch comparison (`parity align`): the layer table
// and the summary lines under it. Its JSON is report/json/torch_json.h.
#pragma once

#include <cstdio>
#include <string>

#include "engine/torch/locate_torch.h"
#include "engine/torch/torch_compare.h"

namespace parity {

// One row per aligned leaf layer (every layer with `all_layers`): module,
// how it was aligned, status, ONNX tensor, max_abs or the reason.
std::string FormatAlignTable(const TorchComparison& c, bool all_layers);

// The alignment line with pass/fail counts, the verdict line, then each
// failing output and each output finding.
std::string FormatAlignSummary(const TorchComparison& c);

// `locate --reference torch:DIR`'s console: the export against PyTorch,
// the deployed config `target_label`'s outputs against PyTorch, and the
// fusion localized when only the deployed config departs.
void PrintTorchLocate(const TorchLocateResult& result, const std::string& target_label, std::FILE* out);

}  // namespace parity
