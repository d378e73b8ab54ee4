// Inputs one unit in the last place away (issue 50): the conditioning
// probe. A float32 model fed x and x' (every float input element moved by
// one ulp, up or down at random) gives f(x') - f(x): how far float32's own
// rounding of the inputs moves each output for this very sample. An
// ill-conditioned sample (a random-weight network fed noise) moves by as
// much as the outputs themselves; an image-like one by ~1e-7 of them.
// compare/tolerance.h ApplyConditioningFloor turns it into a band floor.
#pragma once

#include <cstdint>

#include "engine/inputs/sample_gen.h"

namespace parity {

// `sample` with each float32/float64/float16 element x (finite, nonzero)
// moved to its neighbour above or below (seeded by `seed`), each float32 /
// float64 zero to +-eps x the rms of its tensor's nonzero values (1 when
// none: an all-zero sample is exact, the rounding inside the network is
// not); other inputs (ids, masks of integers, bools) unchanged.
Sample PerturbByUlp(const Sample& sample, uint64_t seed);

// |moved - base| elementwise as float32, at least `before`'s element (the
// spread of earlier draws; null: none); non-finite differences count 0.
// Preconditions: the three of one shape, base and moved floating.
Tensor SpreadOf(const Tensor& base, const Tensor& moved, const Tensor* before);

}  // namespace parity
