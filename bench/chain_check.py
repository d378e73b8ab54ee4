"""Cost of `parity check` on a long Relu chain against a plain `parity run` of it.

Issue 29, probe 5: graph algorithms must be linear in the graph, and a check
(passing, or failing and localizing) must stay within a small multiple of
ORT's own run. This builds x -> Relu^N -> y (the reference) and the same chain
with node N/2 an Add of 1 (the planted fault), then reports the CPU seconds
(user + system, of the child alone) and peak RSS of

  run            parity run REF --inputs x.npz -o out.npz
  passing check  parity check REF --runs 1 --warmup 0
  failing check  parity check BAD --reference-model REF --runs 1 --warmup 0

and the ratios to the run. It measures; it gates nothing (the loose bound is
SecurityGraphSize.AFailingCheckOnALongChainFindsThePlantedNodeInBoundedTime).

  .venv/bin/python bench/chain_check.py [--nodes 20000 100000] [--parity build/parity]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain(n, c, path):
    nodes, prev = [], "x"
    for i in range(n):
        op = ("Add", [prev, "c"]) if i == n // 2 else ("Relu", [prev])
        out = "y" if i == n - 1 else f"t{i}"
        nodes.append(helper.make_node(op[0], op[1], [out], name=f"n{i}"))
        prev = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.full((1, 4), c, np.float32), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def measure(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, cpu, wall, after.ru_maxrss / 1024, proc.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[20000, 100000])
    ap.add_argument("--parity", default=os.path.join(os.path.dirname(__file__), "..", "build", "parity"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(os.path.join(tmp, "x.npz"), x=np.full((1, 4), 0.5, np.float32))
        for n in a.nodes:
            ref, bad = os.path.join(tmp, f"ref{n}.onnx"), os.path.join(tmp, f"bad{n}.onnx")
            chain(n, 0.0, ref)
            chain(n, 1.0, bad)
            common = ["--threads", "1"]
            runs = {
                "run": [a.parity, "run", ref, "--inputs", os.path.join(tmp, "x.npz"), "-o",
                        os.path.join(tmp, "o.npz")] + common,
                "passing check": [a.parity, "check", ref, "--runs", "1", "--warmup", "0"] + common,
                "failing check": [a.parity, "check", bad, "--reference-model", ref, "--runs", "1", "--warmup",
                                  "0", "--json", os.path.join(tmp, "r.json")] + common,
            }
            base = None
            for name, cmd in runs.items():
                code, cpu, wall, rss, err = measure(cmd)
                base = base or cpu
                print(f"{n} nodes, {name}: exit {code}, {cpu:.1f} s CPU ({cpu / base:.1f}x the run), "
                      f"{wall:.1f} s wall, peak RSS of the children so far {rss:.0f} MiB", flush=True)
            with open(os.path.join(tmp, "r.json")) as f:
                loc = json.load(f).get("locate") or {}
            print(f"  first divergence {(loc.get('first_divergence') or {}).get('producer')}; "
                  f"{'; '.join(loc.get('observer_notes') or [])}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
