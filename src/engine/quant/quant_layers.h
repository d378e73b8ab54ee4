// The per-layer precision of a model derived from a float model by a
// quantizer (int8/uint8 QDQ) or a float16 converter (issue 25,
// docs/quantized.md): which layer loses the precision, in steps of the grid
// each tensor lives on.
//
//   1. match the layers by the names the converters keep (layer_match.h);
//   2. one run of each model at ORT_DISABLE_ALL with every matched tensor
//      exposed: each layer's cumulative loss (SQNR, max error in steps of its
//      scale) and its weight's own quantization error;
//   3. each layer cut out of the derived model (its QuantizeLinear inputs to
//      its DequantizeLinear output) and fed the FLOAT model's values of its
//      inputs: its local loss; the worst SQNR among its inputs is what it
//      inherits. `worst_local` is the layer with the lowest local SQNR: the
//      one to keep in float.
#pragma once

#include <string>

#include "compare/tolerance.h"
#include "core/status.h"
#include "core/tensor.h"
#include "engine/quant/quant_result.h"
#include "onnx/model.h"

namespace parity {

struct PrecisionOptions {
  std::string float_label = "float model";
  std::string derived_label = "derived model";
  TolerancePolicy policy;  // the judge's policy (the metrics do not depend on it)
  bool local = true;       // measure each layer's local loss (one small session per layer)
};

// Returns the report; a layer that cannot be measured carries a note.
// Errors: a model ORT refuses, a sample that does not fit, a run that fails.
Result<QuantReport> AnalyzePrecision(const Model& float_model, const Model& derived_model, const Sample& sample,
                                     const PrecisionOptions& options = {});

// Whether `derived` looks derived by a quantizer or a float16 converter from
// `float_model` (MatchLayers' kind is not "float").
bool IsDerivedPrecision(const Model& float_model, const Model& derived);

}  // namespace parity
