// Floating tensors rounded to another floating dtype: a float model's values
// fed to a float16 model (or a float16 region), as the converters' Casts would.
#pragma once

#include "core/tensor.h"

namespace parity {

// `t` as `dtype` when both are float16/float32/float64 and they differ
// (round to nearest even through float); otherwise `t` unchanged.
Tensor CastFloating(const Tensor& t, DType dtype);

}  // namespace parity
