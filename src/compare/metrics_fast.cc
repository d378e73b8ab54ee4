// The fast path for baseline x86-64 (SSE2); see metrics_fast_impl.h.
#define PARITY_FAST_NS baseline
#include "compare/metrics_fast_impl.h"
