// The float32 kernel on AVX-512VL machines: the same code as
// metrics_f32_avx2.cc, compiled so that it has 32 vector registers (with 16
// its main loop keeps accumulators in memory). See metrics_f32_impl.h.
#define PARITY_F32_NS avx512
#include "compare/metrics_f32_impl.h"
