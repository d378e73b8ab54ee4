// Task agreement of a detector's output (issue 40, docs/quantized.md "Task
// agreement"): per anchor, the best class and its score, the quantities a
// detector's post-processing (a score threshold, then NMS) decides on.
// Top-1 over such an output would take the argmax over thousands of anchors.
//
// A detector output (DetectorLayoutOf): floating, rank 3, laid out
// [batch, 4 + classes, anchors] (Ultralytics YOLOv8's output0) or
// [batch, anchors, 4 + classes], with 1 <= classes <= 1020 and more anchors
// than 4 + classes; every class score in [0, 1] and some box value outside
// it (boxes in pixels).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity {

// Ultralytics' default confidence threshold: an anchor whose best score
// reaches it is a detection.
inline constexpr double kDetectionScore = 0.25;

struct DetectorLayout {
  int class_axis = 1;   // the axis of 4 + classes
  int64_t classes = 0;  // class scores per anchor
  int64_t anchors = 0;
};

std::optional<DetectorLayout> DetectorLayoutOf(const Tensor& t);

struct DetectionAgreement {
  std::string output;
  DetectorLayout layout;
  int64_t samples = 0;
  int64_t anchors = 0;          // anchors counted, over every sample and batch row
  int64_t class_agree = 0;      // anchors whose best class is the same on both sides
  int64_t detections = 0;       // anchors whose reference best score >= kDetectionScore
  int64_t kept = 0;             // of those, the same class and a target score >= kDetectionScore
  int64_t spurious = 0;         // anchors >= kDetectionScore in the target only
  double max_score_diff = 0;    // max |best score, reference - target| over anchors
  double class_agreement() const {
    return anchors > 0 ? static_cast<double>(class_agree) / static_cast<double>(anchors) : 1.0;
  }
};

// Adds one sample's detector outputs (those `reference` and `test` both
// have, same shape) to `tallies` (one entry per output, added on first sight).
void AddDetections(const TensorSet& reference, const TensorSet& test, std::vector<DetectionAgreement>& tallies);

}  // namespace parity
