// The fast path for AVX2 + FMA + F16C machines, chosen at run time by
// UseAvx2Kernel(); see metrics_fast_impl.h.
#pragma GCC target("fma")
#define PARITY_FAST_NS avx2
#include "compare/metrics_fast_impl.h"
