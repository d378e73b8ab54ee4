"""Wall time of `parity check` over one plain `parity run` of the same samples.

Issue 43: the latency and determinism runs of check follow a time budget
(--latency-seconds, onnxruntime_perf_test's duration mode), not a fixed count,
so that check on a big model costs a few plain runs, not sixty (goal: at most
3x). For each model: `parity inputs` writes one typical sample, then

  run    parity run MODEL --inputs in.npz -o out.npz
  check  parity check MODEL --inputs in.npz [--latency-seconds S]

each timed (wall, best of --repeat), and the ratio printed. It measures; it
gates nothing.

  .venv/bin/python bench/check_budget.py MODEL.onnx ... [--parity build/parity] [--repeat 1]
  .venv/bin/python bench/big_model.py /tmp/big.onnx --layers 4   # a 268M-parameter stand-in
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def timed(argv):
    start = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if r.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return wall


def measure(parity, model, repeat, extra):
    with tempfile.TemporaryDirectory(prefix="parity-budget-") as tmp:
        inputs = os.path.join(tmp, "in.npz")
        subprocess.run([parity, "inputs", model, "-o", inputs, "--kind", "typical"], check=True,
                       stdout=subprocess.DEVNULL)
        run = min(timed([parity, "run", model, "--inputs", inputs, "-o", os.path.join(tmp, "o.npz")])
                  for _ in range(repeat))
        check = min(timed([parity, "check", model, "--inputs", inputs, *extra]) for _ in range(repeat))
    return run, check


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--parity", default=os.environ.get("PARITY_BINARY", "build/parity"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--latency-seconds", type=float, default=None)
    args = ap.parse_args()
    extra = [] if args.latency_seconds is None else ["--latency-seconds", str(args.latency_seconds)]
    print(f"{'model':<40} {'run s':>8} {'check s':>8} {'ratio':>6}")
    for m in args.models:
        run, check = measure(args.parity, m, args.repeat, extra)
        print(f"{os.path.basename(m):<40} {run:>8.2f} {check:>8.2f} {check / run:>6.2f}")


if __name__ == "__main__":
    main()
