// The float32 kernel for AVX2 + FMA machines; see metrics_f32_impl.h.
#define PARITY_F32_NS avx2
#include "compare/metrics_f32_impl.h"
