#include "ort/run_limits.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace parity::ort {
namespace {

std::atomic<double> g_seconds{0};
std::atomic<int64_t> g_memory_bytes{0};

}  // namespace

ScopedRunLimits::ScopedRunLimits(RunLimits limits) : outer_(CurrentRunLimits()) { Set(limits); }

ScopedRunLimits::~ScopedRunLimits() { Set(outer_); }

void ScopedRunLimits::Set(RunLimits limits) {
  g_seconds.store(limits.seconds);
  g_memory_bytes.store(limits.memory_bytes);
}

RunLimits CurrentRunLimits() { return {.seconds = g_seconds.load(), .memory_bytes = g_memory_bytes.load()}; }

bool IsRunOverMemory(const Error& e) {
  const std::string& m = e.message();
  return m.find(kRunOverMemory) != std::string::npos || m.find("Failed to allocate memory") != std::string::npos ||
         m.find("bad_alloc") != std::string::npos || m.find("bad allocation") != std::string::npos ||
         m.find("out of memory") != std::string::npos;
}

int64_t DefaultRunMemoryBytes() {
  int64_t usable = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "re")) {  // "max" when unlimited
    long long cgroup = 0;
    if (std::fscanf(f, "%lld", &cgroup) == 1 && cgroup > 0 && cgroup < usable) usable = cgroup;
    std::fclose(f);
  }
  return usable / 2;
}

int64_t ResidentBytes() {
  // Read with the C library, not a stream: the watchdog polls it every 10 ms.
  FILE* f = std::fopen("/proc/self/statm", "re");
  if (f == nullptr) return 0;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<int64_t>(resident) * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace parity::ort
