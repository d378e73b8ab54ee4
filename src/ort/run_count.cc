#include "ort/run_count.h"

#include <atomic>

namespace parity::ort {
namespace {
std::atomic<int64_t> runs{0};
}  // namespace

int64_t OrtRuns() { return runs.load(std::memory_order_relaxed); }
void CountOrtRuns(int64_t n) { runs.fetch_add(n, std::memory_order_relaxed); }

}  // namespace parity::ort
