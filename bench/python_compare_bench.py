"""parity.compare vs the seed-style NumPy check on two float32 arrays, in one run.

Usage: python bench/python_compare_bench.py [N_ELEMENTS=67108864] [REPS=3] [normal|uniform]

Data: ref ~ N(0, 1) and test = ref + 1e-5 N(0, 1), as bench/compare_bench.cc
(a typical fused-kernel difference); `uniform` draws ref from [0, 1) instead,
where many tiny references make max_rel's exact recomputation run often.

Each side runs in its own child process (so one's allocations cannot inflate
the other's peak RSS) on the same seeded arrays, built without temporaries.
Reports the median wall time of each, the speed ratio, and parity.compare's
peak RSS (ru_maxrss) against the bytes of the two arrays: no copy of the
inputs means the peak stays within a few percent of them. Reports, never gates.
"""
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import numpy as np
n, reps, side, dist = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[5]
rng = np.random.default_rng(0)
ref = rng.random(n, dtype=np.float32) if dist == "uniform" else rng.standard_normal(n, dtype=np.float32)
test = np.empty_like(ref)
step = 1 << 20
for i in range(0, n, step):  # test = ref + noise, chunk by chunk: no full-size temporary
    test[i:i + step] = ref[i:i + step] + rng.standard_normal(min(step, n - i), dtype=np.float32) * 1e-5
if side == "parity":
    import parity
    fn = lambda: parity.compare(ref, test)
else:
    sys.path.insert(0, sys.argv[4])
    from numpy_seed_check import seed_check
    fn = lambda: seed_check(ref, test)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
times, result = [], None
for _ in range(reps):
    t0 = time.perf_counter()
    result = fn()
    times.append(time.perf_counter() - t0)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
times.sort()
out = {"median_s": times[len(times) // 2], "best_s": times[0], "peak_rss": peak, "rss_before": before,
       "array_bytes": ref.nbytes + test.nbytes}
if side == "parity":
    out["max_abs"] = result.metrics["max_abs"]
else:
    out["max_abs"] = result["max_abs"]
print(json.dumps(out))
"""


def child(side, n, reps, dist):
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run([sys.executable, "-c", CHILD, str(n), str(reps), side, here, dist],
                       check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64 * 1024 * 1024
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    dist = sys.argv[3] if len(sys.argv) > 3 else "normal"
    t0 = time.time()
    par = child("parity", n, reps, dist)
    seed = child("numpy", n, reps, dist)
    gib = par["array_bytes"] / 2**20
    print(f"{dist} data: {n} float32 elements per array, two arrays = {gib:.0f} MiB, {reps} reps, {os.cpu_count()} CPUs")
    print(f"parity.compare      median {par['median_s'] * 1000:8.1f} ms  (best {par['best_s'] * 1000:.1f})")
    print(f"seed NumPy check    median {seed['median_s'] * 1000:8.1f} ms  (best {seed['best_s'] * 1000:.1f})")
    print(f"speed ratio (median): {seed['median_s'] / par['median_s']:.1f}x")
    print(f"max_abs: parity {par['max_abs']!r}, numpy {seed['max_abs']!r}")
    print(f"parity peak RSS {par['peak_rss'] / 2**20:.0f} MiB = {par['peak_rss'] / par['array_bytes']:.3f} x the two "
          f"arrays (RSS before the first compare {par['rss_before'] / 2**20:.0f} MiB); "
          f"seed check peak {seed['peak_rss'] / 2**20:.0f} MiB = {seed['peak_rss'] / seed['array_bytes']:.2f} x")
    print(f"(bench took {time.time() - t0:.0f} s)")
    print(json.dumps({"parity": par, "numpy_seed": seed}))


if __name__ == "__main__":
    main()
