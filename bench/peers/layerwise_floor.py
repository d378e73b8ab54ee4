"""The floor of the every-layer job (issue 26): what a plain ORT run with every tensor exposed
and the bytes written costs, without parity's checks, manifest or hashes.

    .venv/bin/python bench/peers/layerwise_floor.py CACHE/MODEL [OUT_DIR]

CACHE/MODEL is a run_peers.py cache folder (model.onnx, inputs.npz). The mark-all model (every
node output a graph output, as the seed script makes it) is prepared and written to a temp file
first, untimed; then, timed: ORT's session from that file at `disable`, one run, and one .npy per
tensor into OUT_DIR (default: a temp folder, removed). Prints one JSON line: the seconds of each
part, their sum (the floor) and the bytes written. Python's start-up and imports are not counted.
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_children import _mark_all  # noqa: E402


def main():
    d = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else None
    import onnxruntime as ort
    feed = dict(np.load(os.path.join(d, "inputs.npz")))
    tmp = tempfile.mkdtemp(prefix="layerwise-floor-")
    try:
        m, _ = _mark_all(os.path.join(d, "model.onnx"))
        exposed = os.path.join(tmp, "exposed.onnx")
        with open(exposed, "wb") as f:
            f.write(m.SerializeToString())
        del m
        out = out or os.path.join(tmp, "out")
        os.makedirs(out, exist_ok=True)
        t0 = time.perf_counter()
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 3
        s = ort.InferenceSession(exposed, so, providers=["CPUExecutionProvider"])
        t1 = time.perf_counter()
        names = [o.name for o in s.get_outputs()]
        vals = s.run(None, feed)
        t2 = time.perf_counter()
        total = 0
        for i, (n, v) in enumerate(zip(names, vals)):
            p = os.path.join(out, "%04d_%s.npy" % (i, re.sub(r"[^A-Za-z0-9._-]", "_", n)))
            np.save(p, v)
            total += os.path.getsize(p)
        t3 = time.perf_counter()
        print(json.dumps({"model": os.path.basename(os.path.normpath(d)), "session_s": round(t1 - t0, 3),
                          "run_s": round(t2 - t1, 3), "write_s": round(t3 - t2, 3),
                          "floor_s": round(t3 - t0, 3), "tensors": len(names), "bytes": total}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
