// A seeded standard-normal sample from a model's signature, for commands run
// without --inputs: dynamic dims become 1; float inputs N(0, 1), integer
// inputs 0, bool inputs false.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/model.h"

namespace parity {

// Errors: kUnsupported for an input whose type is unknown or a string.
Result<Sample> RandomSample(const Model& model, uint32_t seed = 0);

}  // namespace parity
