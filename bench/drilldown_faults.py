#!/usr/bin/env python3
"""Planted one-node faults in real CNNs, localized by `parity locate` at --opt all (issue 14).

For each model: export it (random weights, never downloaded) into a cache folder, pick Conv
nodes spread over the graph, scale one Conv's weight initializer by 1.01 in a copy (the
`--target-model`), run `parity locate MODEL --target-model PLANTED --opt all --no-ablation
--json`, and count a hit when the top culprit covers the planted node with at most 4 original
nodes. Each model is also located against itself (no target model): a culprit there is a false
alarm. Prints one line per case and a summary; `--json FILE` writes every case.

    /work/main/.venv/bin/python bench/drilldown_faults.py --parity build/parity \
        [--cache ~/.cache/parity_drilldown] [--per-model 6] [--models resnet18,...] [--json out.json]

Needs torch, torchvision, onnx and numpy (the project's .venv). Reports; never gates.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper


def export(name, path, size):
    import torch
    import torchvision

    torch.manual_seed(0)
    dynamic = None
    if name == "detector":
        model = Detector()
        dynamic = {"images": {2: "height", 3: "width"}}
    else:
        model = getattr(torchvision.models, name)(weights=None)
    calibrate_batchnorm(model, size)
    x = torch.randn(1, 3, size, size)
    tmp = path + ".tmp"
    try:
        torch.onnx.export(model, (x,), tmp, dynamo=False, opset_version=17, input_names=["images"],
                          output_names=["output"], dynamic_axes=dynamic)
    except Exception as e:  # the TorchScript exporter may be gone: the dynamo one
        print(f"  {name}: TorchScript export failed ({e}); dynamo", file=sys.stderr)
        shapes = None
        if dynamic:
            h, w = torch.export.Dim("height", min=32, max=1024), torch.export.Dim("width", min=32, max=1024)
            shapes = {"x": {2: h, 3: w}}
        torch.onnx.export(model, (x,), tmp, dynamo=True, input_names=["images"], output_names=["output"],
                          dynamic_shapes=shapes, external_data=False)
    os.replace(tmp, path)


def calibrate_batchnorm(model, size):
    """BatchNorm running statistics from a few random batches, as training leaves them.

    With torchvision's random init and BatchNorm's default statistics (mean 0, var 1) activations
    shrink layer by layer (mobilenet_v3's and the detector's outputs end near 1e-2), so a 1% weight
    change stays below the default atol at the outputs: no divergence to locate. Calibrated, every
    BatchNorm normalizes, as in a trained network.
    """
    import torch

    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(4, 3, size, size))
    model.eval()


def Detector():
    """A small YOLO-like detector: strided Conv+BN+SiLU backbone, an upsampled FPN merge and a head."""
    import torch
    from torch import nn

    def cbs(i, o, s=1):
        return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.SiLU())

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = cbs(3, 16, 2)
            self.c2 = nn.Sequential(cbs(16, 32, 2), cbs(32, 32))
            self.c3 = nn.Sequential(cbs(32, 64, 2), cbs(64, 64))
            self.c4 = nn.Sequential(cbs(64, 128, 2), cbs(128, 128))
            self.lat = cbs(128, 64)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.merge = nn.Sequential(cbs(128, 64), cbs(64, 64))
            self.head = nn.Conv2d(64, 3 * 9, 1)

        def forward(self, x):
            p3 = self.c3(self.c2(self.stem(x)))
            p4 = self.lat(self.c4(p3))
            y = self.merge(torch.cat([self.up(p4), p3], 1))
            return self.head(y)

    return Net()


def conv_nodes(model):
    inits = {t.name for t in model.graph.initializer}
    return [n for n in model.graph.node if n.op_type == "Conv" and len(n.input) > 1 and n.input[1] in inits]


def plant(model, node, factor=1.01):
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if t.name == node.input[1]:
            w = numpy_helper.to_array(t).astype(np.float32) * np.float32(factor)
            t.CopyFrom(numpy_helper.from_array(w, t.name))
            return m
    raise KeyError(node.input[1])


def locate(parity, model, inputs, target=None):
    out = model + (".planted" if target else ".healthy") + ".json"
    cmd = [parity, "locate", model, "--inputs", inputs, "--opt", "all", "--no-ablation", "--json", out]
    if target:
        cmd += ["--target-model", target]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    if p.returncode not in (0, 1):
        return None, wall, p.stderr.strip().splitlines()[-1:] or ["?"]
    with open(out) as f:
        return json.load(f), wall, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/parity_drilldown"))
    ap.add_argument("--models", default="resnet18,resnet50,mobilenet_v3_small,squeezenet1_0,efficientnet_b0,detector")
    ap.add_argument("--per-model", type=int, default=6)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.cache, exist_ok=True)
    cases, healthy = [], []
    for name in a.models.split(","):
        path = os.path.join(a.cache, f"{name}.onnx")
        if not os.path.exists(path):
            export(name, path, a.size)
        model = onnx.load(path)
        inputs = os.path.join(a.cache, f"{name}_inputs.npz")
        rng = np.random.default_rng(1)
        shape = (1, 3, a.size + 32, a.size) if name == "detector" else (1, 3, a.size, a.size)  # dynamic H/W used
        np.savez(inputs, **{model.graph.input[0].name: rng.standard_normal(shape).astype(np.float32)})
        report, wall, err = locate(a.parity, path, inputs)
        n_culprits = len(report["culprits"]) if report else None
        healthy.append({"model": name, "culprits": n_culprits, "error": err, "wall_s": wall})
        print(f"{name}: healthy: {n_culprits} culprits ({wall:.1f} s){' ERROR ' + str(err) if err else ''}",
              flush=True)
        convs = conv_nodes(model)
        picks = sorted({round(i * (len(convs) - 1) / max(1, a.per_model - 1)) for i in range(a.per_model)})
        for i in picks:
            node = convs[i]
            target = os.path.join(a.cache, f"{name}_planted.onnx")
            onnx.save(plant(model, node), target)
            report, wall, err = locate(a.parity, path, inputs, target)
            case = {"model": name, "planted": node.name, "conv_index": i, "wall_s": wall, "error": err}
            if report and report["culprits"]:
                top = report["culprits"][0]
                n = top.get("narrowing") or {}
                steps = n.get("steps") or []
                case.update(top_culprit=top["fused_node"], covers=len(top["covers"]),
                            region=len(steps[0]["covers"]) if steps else len(top["covers"]),
                            steps=len(steps), sub_regions=n.get("sub_regions_run", 0),
                            sessions=n.get("sessions", 0), complete=n.get("complete"),
                            note=n.get("note"),
                            hit=node.name in top["covers"] and len(top["covers"]) <= 4)
            else:
                case.update(hit=False, top_culprit=None,
                        diverged=bool(report and report["first_divergence"]))
            cases.append(case)
            print(f"  {name} conv {i:3d} {node.name:48s} -> {str(case.get('top_culprit'))[:40]:40s} "
                  f"region {case.get('region')} -> {case.get('covers')} nodes, {case.get('sub_regions')} "
                  f"sub-regions, hit {case['hit']} ({wall:.1f} s){' ERROR ' + str(err) if err else ''}",
                  flush=True)
    hits = sum(c["hit"] for c in cases)
    false_alarms = sum(1 for h in healthy if h["culprits"])
    print(f"hits {hits}/{len(cases)} ({100.0 * hits / max(1, len(cases)):.1f}%), "
          f"false alarms on healthy models {false_alarms}/{len(healthy)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cases": cases, "healthy": healthy, "hits": hits, "total": len(cases)}, f, indent=1)


if __name__ == "__main__":
    main()
