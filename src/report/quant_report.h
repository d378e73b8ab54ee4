// The writers of the per-layer precision report of a derived model
// (engine/quant/quant_result.h; docs/quantized.md): the `quant` object of
// parity.locate/1 and parity.check/1, and its console table.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/quant/quant_result.h"
#include "engine/quant/detections.h"
#include "engine/quant/top1.h"

namespace parity {

nlohmann::json QuantReportToJson(const QuantReport& report);
nlohmann::json QuantLayerToJson(const QuantLayer& layer);
// The table: one row per layer (SQNR, steps, local and inherited), the worst
// local loss named below it, then the unmatched layers.
// check's `top1`: [{output, samples, rows, agree, agreement, flipped}].
nlohmann::json Top1ToJson(const std::vector<Top1Agreement>& top1);
// One line per classifier-like output: "top-1 agreement 63/64 (98.4%), 1.6% flipped".
std::string FormatTop1(const std::vector<Top1Agreement>& top1);
// check's `detections`: [{output, class_axis, classes, anchors_per_sample, samples, anchors, class_agree,
// class_agreement, detections, kept, spurious, max_score_diff}].
nlohmann::json DetectionsToJson(const std::vector<DetectionAgreement>& detections);
// One line per detector output: per-anchor class agreement, detections kept.
std::string FormatDetections(const std::vector<DetectionAgreement>& detections);
// max_rows 0: every layer.
std::string FormatQuantTable(const QuantReport& report, size_t max_rows = 0);

}  // namespace parity
