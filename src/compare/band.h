// The tolerance band: how far a value may be from the reference's, at the
// reference's scale. The one place its formula is written (house test
// tests/house/test_spine.py): every verdict, score and explanation asks it.
// The SIMD kernels (compare/metrics_*) count out-of-band elements with the
// same formula inlined per lane.
#pragma once

#include "compare/tolerance.h"

namespace parity {

// atol + rtol * scale. `scale`: |ref| for one element, max|ref| for a
// tensor judged by its largest error (decide_by max, the error score),
// rms(ref) for one judged by its mean error (decide_by mean).
inline double Band(const Tolerance& t, double scale) { return t.atol + t.rtol * scale; }

}  // namespace parity
