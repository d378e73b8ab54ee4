// The inputs a derived model's numbers are judged on (issue 50): an int8
// copy's input quantizer saturates beyond its calibrated range by design,
// and an fp16 copy is converted for the values its float model was meant
// for. A boundary sample beyond both the calibrated range and what the
// typical samples span (parity's x100 `boundary_large`) is judged for
// robustness there (finite outputs, no crash), not against float bands;
// the report says which rule judged which sample.
//
// The range of a float input is max|x| over the typical samples, widened to
// the range its QuantizeLinear can represent when the derived model
// quantizes the input directly ((qmin - zero_point) * scale to
// (qmax - zero_point) * scale, per-tensor scale). A sample is out of range
// when some float input's max|x| exceeds that bound by more than 1%.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "engine/inputs/sample_gen.h"
#include "onnx/model.h"

namespace parity {

struct InputRange {
  double bound = 0;    // the largest |x| judged as numerics
  std::string source;  // "typical samples", "QuantizeLinear 'x_q' (scale 0.0078, zero point 128, uint8)"
};

// The per-tensor QuantizeLinear that reads graph input `input` directly, and
// the largest |x| its grid holds; none when no such quantizer reads it.
struct InputQuantizer {
  std::string node;
  std::string grid;  // "uint8", "int8", "uint16", "int16"
  double scale = 0, zero_point = 0;
  double bound = 0;  // max(|qmin - zp|, |qmax - zp|) * scale
};
std::optional<InputQuantizer> InputQuantizerOf(const Model& derived, const std::string& input);

// Per float input of `derived`: the bound from `samples` (their typical
// ones) and its input quantizer. Inputs without a typical sample have none.
std::map<std::string, InputRange> DerivedInputRanges(const Model& derived, const std::vector<Sample>& samples);

// Why `sample` lies beyond `ranges` ("'images' reaches max|x| 100 beyond
// 1 (typical samples)"), or "" when it lies within.
std::string OutOfRange(const Sample& sample, const std::map<std::string, InputRange>& ranges);

}  // namespace parity
