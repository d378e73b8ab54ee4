// The fast path for AVX2 + F16C machines, chosen at run time by
// UseAvx2Kernel(); see metrics_fast_impl.h.
#define PARITY_FAST_NS avx2
#include "compare/metrics_fast_impl.h"
