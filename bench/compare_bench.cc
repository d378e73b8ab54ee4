// Benchmark of parity's comparator (reported, never a timed test).
//
// On two float32 tensors of N elements (default 64M; argv[1] overrides) it times:
//   stream   a plain vectorized read of both arrays (sum of both): the bandwidth limit
//   parity   ComputeMetrics with 1 thread and with 2
//   numpy    the seed-style check (bench/numpy_seed_check.py) run by Debian's
//            the .venv python (PARITY_PYTHON) on the same data, timed inside Python after loading
// Each is run `reps` times (argv[2], default 9), stream and parity interleaved;
// medians are printed with the ratios, in wall time and in CPU time of the
// process, then the best times (on a machine whose memory bandwidth is shared
// with other tenants, the medians swing by tens of percent from run to run;
// the best of each, taken in the same run, are the steadier comparison), with
// the load average.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compare/metrics.h"

#ifndef PARITY_PYTHON
#define PARITY_PYTHON "python3"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// A plain streaming read: 16 independent float lanes so the compiler vectorizes it.
__attribute__((noinline)) float StreamSum(const float* a, const float* b, int64_t n) {
  float s[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) s[l] += a[i + l] + b[i + l];
  }
  for (; i < n; ++i) s[0] += a[i] + b[i];
  float total = 0;
  for (float x : s) total += x;
  return total;
}

double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

struct Times {
  std::vector<double> wall, cpu;
};

template <typename F>
void TimeMs(Times& out, F&& f) {
  const double c0 = CpuMs();
  const auto t0 = Clock::now();
  f();
  out.wall.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  out.cpu.push_back(CpuMs() - c0);
}

std::string LoadAverage() {
  std::string a, b, c;
  std::ifstream("/proc/loadavg") >> a >> b >> c;
  return a.empty() ? "unknown" : fmt::format("{} {} {}", a, b, c);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t{64} << 20);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 9;
  parity::Tensor ref(parity::DType::kFloat32, {n});
  parity::Tensor test(parity::DType::kFloat32, {n});
  {
    std::mt19937_64 rng(42);
    std::normal_distribution<float> g(0.f, 1.f);
    auto r = ref.mutable_view<float>();
    auto t = test.mutable_view<float>();
    for (int64_t i = 0; i < n; ++i) {
      r[i] = g(rng);
      t[i] = r[i] + 1e-5f * g(rng);  // a typical fused-kernel difference
    }
  }
  const float* r = ref.view<float>().data();
  const float* t = test.view<float>().data();

  const std::string load_before = LoadAverage();
  Times stream, p1, p2;
  volatile float sink = 0;
  for (int k = 0; k < reps; ++k) {
    TimeMs(stream, [&] { sink = sink + StreamSum(r, t, n); });
    TimeMs(p1, [&] { (void)parity::ComputeMetrics(ref, test, {.atol = 1e-4, .rtol = 1e-3, .threads = 1}); });
    TimeMs(p2, [&] { (void)parity::ComputeMetrics(ref, test, {.atol = 1e-4, .rtol = 1e-3, .threads = 2}); });
  }

  double numpy_ms = -1, numpy_cpu_ms = -1, numpy_best_ms = -1;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("parity_bench_{}", getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "ref.f32", std::ios::binary).write(reinterpret_cast<const char*>(r), n * 4);
    std::ofstream(dir / "test.f32", std::ios::binary).write(reinterpret_cast<const char*>(t), n * 4);
  }
  const std::string script = (std::filesystem::path(__FILE__).parent_path() / "numpy_seed_check.py").string();
  const std::string cmd = fmt::format("{} {} {} {} {} {}", PARITY_PYTHON, script, (dir / "ref.f32").string(),
                                      (dir / "test.f32").string(), reps, (dir / "out.txt").string());
  if (std::system(cmd.c_str()) == 0) {
    std::ifstream in(dir / "out.txt");
    in >> numpy_ms >> numpy_cpu_ms >> numpy_best_ms;
  }
  std::filesystem::remove_all(dir);

  const double bytes = 2.0 * 4.0 * static_cast<double>(n);
  fmt::print("elements: {} float32 pairs, {} reps; load average {} (before), {} (after)\n", n, reps, load_before,
             LoadAverage());
  enum class Stat { kMedianWall, kMedianCpu, kBestWall };
  for (const Stat stat : {Stat::kMedianWall, Stat::kMedianCpu, Stat::kBestWall}) {
    auto pick = [&](const Times& x) {
      return stat == Stat::kMedianWall ? Median(x.wall) : stat == Stat::kMedianCpu ? Median(x.cpu) : Best(x.wall);
    };
    const double s = pick(stream), a = pick(p1);
    const double np = stat == Stat::kMedianWall ? numpy_ms : stat == Stat::kMedianCpu ? numpy_cpu_ms : numpy_best_ms;
    fmt::print("-- {} --\n", stat == Stat::kMedianWall  ? "median wall time"
                             : stat == Stat::kMedianCpu ? "median CPU time of the process"
                                                         : "best wall time");
    fmt::print("stream read (1 thread): {:8.1f} ms  {:6.2f} GB/s\n", s, bytes / s / 1e6);
    fmt::print("parity, 1 thread:       {:8.1f} ms  {:6.2f} GB/s  = {:5.1f}% of stream\n", a, bytes / a / 1e6,
               100 * s / a);
    if (stat != Stat::kMedianCpu) {  // CPU time adds up both threads
      const double b = pick(p2);
      fmt::print("parity, 2 threads:      {:8.1f} ms  {:6.2f} GB/s  = {:5.1f}% of stream\n", b,
                 bytes / b / 1e6, 100 * s / b);
      if (np > 0) fmt::print("speed-up over numpy, 2 threads: {:5.1f}x\n", np / b);
    }
    if (np > 0) {
      fmt::print("numpy seed-style check: {:8.1f} ms\n", np);
      fmt::print("speed-up over numpy, 1 thread:  {:5.1f}x\n", np / a);
    } else {
      fmt::print("numpy seed-style check: not run ({} failed)\n", cmd);
    }
  }
  return 0;
}
