"""check --dataset throughput (issue 27, docs/dataset.md): reports, never gates.

    PYTHONPATH=python .venv/bin/python bench/dataset_bench.py [--samples 1000] [--parity build/parity]

Makes squeezenet1_1 (random weights, 32x32, 10 classes) and a dataset of
--samples samples (.npz files of 10), then measures samples/s of
  - a plain ONNX Runtime loop (Python onnxruntime) doing what check --dataset
    does per sample: the target (all) and the reference (disable) run, max |diff|;
  - parity's local engine (the streaming pass, locate off);
  - the Ray engine with 1 and 2 actors: the whole driver, the cluster's
    start-up and the mapping alone (the driver's own timing line).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def make(tmp, samples):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.squeezenet1_1(weights=None, num_classes=10).eval()
    path = os.path.join(tmp, "model.onnx")
    torch.onnx.export(model, torch.randn(1, 3, 32, 32), path, input_names=["input"], output_names=["logits"],
                      opset_version=17, dynamo=False)
    data = os.path.join(tmp, "data")
    os.makedirs(data)
    rng = np.random.default_rng(0)
    for f in range(samples // 10):
        np.savez(os.path.join(data, f"part{f:04d}.npz"),
                 **{f"s{i}/input": rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for i in range(10)})
    return path, data


def plain_ort(model, data):
    import onnxruntime as ort
    target = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    reference = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    n, start = 0, time.perf_counter()
    for path in sorted(glob.glob(os.path.join(data, "*.npz"))):
        with np.load(path) as z:
            for key in z.files:
                x = {"input": z[key]}
                np.abs(target.run(None, x)[0] - reference.run(None, x)[0]).max()
                n += 1
    return n / (time.perf_counter() - start)


def parity(binary, model, data, tmp, *extra, env=None):
    out = os.path.join(tmp, f"r{len(extra)}{time.time_ns()}.json")
    start = time.perf_counter()
    r = subprocess.run([binary, "check", model, "--dataset", data, "--dataset-locate", "0", "--json", out, *extra],
                       capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    assert r.returncode == 0, r.stdout + r.stderr
    with open(out) as f:
        report = json.load(f)
    timing = re.search(r"cluster up in ([\d.]+) s; .* in ([\d.]+) s", r.stderr)
    return report, wall, timing


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=1000)
    p.add_argument("--parity", default=os.path.join(REPO, "build", "parity"))
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="parity-dataset-bench-") as tmp:
        model, data = make(tmp, args.samples)
        ort_rate = plain_ort(model, data)
        local, wall, _ = parity(args.parity, model, data, tmp)
        local_rate = local["count"] / local["seconds"]
        print(f"plain ORT loop (target + reference, max|diff|): {ort_rate:.1f} samples/s")
        print(f"parity local engine: {local_rate:.1f} samples/s ({local_rate / ort_rate:.2f}x the plain loop; "
              f"whole command {wall:.1f} s)")
        env = dict(os.environ, PARITY_PYTHON=sys.executable,
                   PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), os.environ.get("PYTHONPATH", "")]))
        for actors in (1, 2):
            ray, wall, timing = parity(args.parity, model, data, tmp, "--engine", "ray", "--ray-actors", str(actors),
                                       env=env)
            assert ray["samples"] == local["samples"], "the Ray engine's rows differ from the local engine's"
            up, mapped = (float(timing.group(1)), float(timing.group(2))) if timing else (float("nan"),) * 2
            print(f"parity ray engine, {actors} actor(s): {ray['count'] / mapped:.1f} samples/s mapping; "
                  f"cluster start-up {up:.1f} s; whole driver {ray['seconds']:.1f} s "
                  f"({ray['count'] / ray['seconds']:.1f} samples/s end to end); rows identical to local")


if __name__ == "__main__":
    main()
