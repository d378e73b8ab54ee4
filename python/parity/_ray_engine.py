"""The Ray engine of ``parity check --dataset --engine ray`` (docs/dataset.md).

``python -m parity._ray_engine --entries FILE --out FILE --actors N
[--address ADDR] [--cpus-per-actor C] -- WORKER...`` is what the C++ command
line runs: FILE lists the dataset's entries ("INDEX<TAB>PATH"); Ray Data maps
them in batches (``map_batches``) over a pool of N actors. Each actor starts
WORKER (``parity dataset-worker MODEL ...``) once, in the actor, with its ORT
sessions' intra-op threads set to the CPUs Ray gave the actor, and sends it
the batch's paths; the worker answers with the rows, computed by the local
engine's own C++ code. The rows are written to --out in entry order, so the
report the command line builds from them is the local engine's, bit for bit.

Without --address a local cluster is started (and stopped); with one, the
driver joins it: every node then needs the same paths (the dataset, the
models, the parity binary) -- a shared file system or the same image.
Exit codes: 0 done, 2 bad input (Ray missing, an unreadable entries file),
3 a failure of Ray or of a worker.
"""
import argparse
import os
import subprocess
import sys
import time
from typing import Dict, List

import numpy as np


class _Worker:
    """One actor: its own ``parity dataset-worker`` with its own two sessions."""

    def __init__(self, worker: List[str], cpus: int):
        self._proc = subprocess.Popen([*worker, "--threads", str(cpus)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, bufsize=1)
        ready = self._proc.stdout.readline()
        if not ready.startswith("O\t"):
            raise RuntimeError(f"parity dataset-worker did not start (exit {self._proc.poll()})")

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        lines = []
        for index, path in zip(batch["index"], batch["path"]):
            self._proc.stdin.write(f"{int(index)}\t{path}\n")
            self._proc.stdin.flush()
            rows = []
            while True:
                line = self._proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"parity dataset-worker died on entry {int(index)} ({path})")
                if line.startswith("E\t"):
                    break
                rows.append(line.rstrip("\n"))
            lines.append("\n".join(rows))
        return {"index": np.asarray(batch["index"], dtype=np.int64), "lines": np.asarray(lines, dtype=object)}


def _parse(argv: List[str]) -> argparse.Namespace:
    if "--" not in argv:
        raise SystemExit("parity._ray_engine: the worker command follows '--'")
    cut = argv.index("--")
    p = argparse.ArgumentParser(prog="python -m parity._ray_engine")
    p.add_argument("--entries", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--address", default=None)
    p.add_argument("--cpus-per-actor", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=0)
    args = p.parse_args(argv[:cut])
    args.worker = argv[cut + 1:]
    return args


def _entries(path: str) -> List[Dict[str, object]]:
    items = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            index, entry = line.rstrip("\n").split("\t", 1)
            items.append({"index": int(index), "path": entry})
    return items


def run(args: argparse.Namespace) -> int:
    try:
        import ray
    except ImportError as e:
        print(f"parity: error: --engine ray needs the ray package (pip install 'ray[data]'): {e}", file=sys.stderr)
        return 2
    items = _entries(args.entries)
    start = time.perf_counter()
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    try:
        total = int(ray.cluster_resources().get("CPU", 1))
        cpus = args.cpus_per_actor or max(1, total // args.actors)
        batch = args.batch_size or max(1, min(64, len(items) // (4 * args.actors) or 1))
        started = time.perf_counter()
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ds = ray.data.from_items(items).map_batches(
            _Worker, fn_constructor_args=(args.worker, cpus), batch_size=batch, concurrency=args.actors,
            num_cpus=cpus, batch_format="numpy")
        by_index = {}
        for b in ds.iter_batches(batch_format="numpy", batch_size=None):
            for index, lines in zip(b["index"], b["lines"]):
                by_index[int(index)] = lines
        mapped = time.perf_counter()
    finally:
        ray.shutdown()
    print(f"parity: ray: cluster up in {started - start:.2f} s; {len(items)} entries on {args.actors} actors "
          f"({cpus} CPUs each) in {mapped - started:.2f} s", file=sys.stderr)
    missing = [i["index"] for i in items if i["index"] not in by_index]
    if missing:
        print(f"parity: error: the Ray engine lost {len(missing)} entries (first: {missing[0]})", file=sys.stderr)
        return 3
    with open(args.out + ".tmp", "w", encoding="utf-8") as f:
        for i in sorted(by_index):
            if by_index[i]:
                f.write(by_index[i] + "\n")
    os.replace(args.out + ".tmp", args.out)
    return 0


def main(argv: List[str]) -> int:
    return run(_parse(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
