"""The seed-style NumPy comparison, timed for bench/compare_bench.cc.

Usage: numpy_seed_check.py REF.f32 TEST.f32 REPS OUT.txt
Loads two raw float32 arrays, runs the check REPS times (excluding the load),
writes the median wall and CPU milliseconds and the best wall time to OUT.txt.
"""
import sys
import time

import numpy as np


def seed_check(ref, test, atol=1e-4, rtol=1e-3):
    diff = np.abs(ref - test)
    out = {
        "max_abs": float(diff.max()),
        "rmse": float(np.sqrt(np.mean((ref - test) ** 2))),
        "max_rel": float((diff / (np.abs(ref) + 1e-12)).max()),
        "allclose": bool(np.allclose(test, ref, rtol=rtol, atol=atol)),
        "cosine": float(np.dot(ref, test) / (np.linalg.norm(ref) * np.linalg.norm(test))),
        "nan": bool(np.isnan(ref).any() or np.isnan(test).any()),
        "inf": bool(np.isinf(ref).any() or np.isinf(test).any()),
    }
    return out


def main():
    ref = np.fromfile(sys.argv[1], dtype=np.float32)
    test = np.fromfile(sys.argv[2], dtype=np.float32)
    reps = int(sys.argv[3])
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        seed_check(ref, test)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    wall.sort()
    cpu.sort()
    with open(sys.argv[4], "w") as f:
        f.write(f"{wall[len(wall) // 2]} {cpu[len(cpu) // 2]} {wall[0]}\n")


if __name__ == "__main__":
    main()
