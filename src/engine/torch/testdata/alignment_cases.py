"""Writes the models, dumps and ground truth for src/engine/torch/alignment_test.cc.

usage: alignment_cases.py OUT_DIR      (PYTHONPATH=<repo>/python, .venv/bin/python)
exit 77 when torch, torchvision or onnx is missing (the test then skips).

OUT_DIR/cases.json lists the cases: {"name", "onnx", "dump", "fault": null or
{"module", "call", "node"}, "truth": [per dump layer: {"module", "call",
"output_index", "leaf", "kind", "expected"}]}.

The truth is derived here from the exported graph, independently of the C++
aligner and by a different rule: the exporter's scope names
(python/ALIGNMENT_NOTES.md; modules never called, like a ModuleList, add no
scope component), a module's tensor being the first output of the
LAST node in its scope (file order), except
  kind "folded"     a Conv whose BatchNorm was folded into it: no counterpart;
  kind "bn_folded"  that BatchNorm: expected is the Conv node's output;
  kind "noop"       no node in its scope (Dropout in eval): its output exists
                    in the graph as its input; the test checks it by value;
  kind "tuple"      output k of a tuple-returning module: the k-th tensor its
                    scope's nodes hand to nodes outside the scope.
"""

import json
import os
import sys

try:
    import onnx
    import torch
    import torchvision
except ImportError:
    sys.exit(77)

import parity.torch
from zoo import models


def scope_of(module, call, called):
    """One component per CALLED module on the path (a ModuleList has no forward, so no scope)."""
    atoms = module.split(".")
    parts = []
    for end in range(len(atoms)):
        if end + 1 < len(atoms) and ".".join(atoms[:end + 1]) not in called:
            continue
        first = 0
        for k in range(end, -1, -1):
            if not atoms[k].isdigit():
                first = k
                break
        parts.append(".".join(atoms[first:end + 1]))
    return "/" + "/".join(parts) + (f"_{call}" if call else "")


def randomize_batchnorm(model, seed):
    """Non-trivial BatchNorm statistics, so that a folded BN changes the Conv's output."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                n = m.num_features
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.5)
                m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                m.bias.copy_(torch.randn(n, generator=g) * 0.2)
    return model


def truth_for(onnx_path, manifest):
    graph = onnx.load(onnx_path).graph
    nodes = list(graph.node)
    graph_outputs = {o.name for o in graph.output}
    layers = manifest["layers"]
    truth = []
    called = {layer["module"] for layer in layers}
    for i, layer in enumerate(layers):
        scope = scope_of(layer["module"], layer["call"], called)
        inside = [n for n in nodes if n.name.startswith(scope + "/")]
        entry = {"module": layer["module"], "call": layer["call"], "output_index": layer["output_index"],
                 "leaf": layer["is_leaf"], "type": layer["type"], "expected": None}
        if inside and layer["output_index"] is None:
            entry.update(kind="scope", expected=inside[-1].output[0])
        elif inside:
            names = {n.name for n in inside}
            outside_reads = {x for n in nodes if n.name not in names for x in n.input}
            # Constants shared with other scopes leave the scope too, but a
            # module never returns one.
            leaving = [o for n in inside if n.op_type != "Constant" for o in n.output
                       if o in outside_reads or o in graph_outputs]
            entry.update(kind="tuple", expected=leaving[layer["output_index"]])
        elif layer["type"].startswith("BatchNorm") and i > 0 and truth[i - 1]["kind"] == "scope" \
                and layers[i - 1]["type"].startswith("Conv"):
            entry.update(kind="bn_folded", expected=truth[i - 1]["expected"])
            truth[i - 1].update(kind="folded", expected=None)
        else:
            entry.update(kind="noop")
        truth.append(entry)
    return truth


def export_case(out, name, model, args, input_names, output_names):
    model.eval()
    onnx_path = os.path.join(out, name + ".onnx")
    dump_dir = os.path.join(out, name + "_dump")
    parity.torch.export(model, args, onnx_path, dump_dir=dump_dir, opset_version=17, dynamo=False,
                        input_names=input_names, output_names=output_names)
    with open(os.path.join(dump_dir, "manifest.json")) as f:
        manifest = json.load(f)
    return {"name": name, "onnx": onnx_path, "dump": dump_dir, "fault": None,
            "truth": truth_for(onnx_path, manifest)}


def plant(case, suffix, edit, fault):
    """A copy of the case's ONNX file edited by `edit(model)`; the dump stays the healthy one."""
    m = onnx.load(case["onnx"])
    node = next(n for n in m.graph.node if n.name == fault["node"])
    edit(node)
    path = case["onnx"].replace(".onnx", f"_{suffix}.onnx")
    onnx.save(m, path)
    return dict(case, name=case["name"] + "_" + suffix, onnx=path, fault=fault)


def resize_to_linear(node):
    for a in node.attribute:
        if a.name == "mode":
            a.s = b"linear"


def relu_to_leaky(node):
    node.op_type = "LeakyRelu"  # alpha defaults to 0.01
    node.attribute.append(onnx.helper.make_attribute("alpha", 0.01))


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    x64 = torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    cases = [
        export_case(out, "conv_bn_relu", randomize_batchnorm(models.ConvBnRelu(), 1),
                    models.ConvBnRelu.make_inputs(0, size=32), ["input"], ["output"]),
        export_case(out, "resnet18", randomize_batchnorm(torchvision.models.resnet18(weights=None), 2),
                    (x64,), ["images"], ["logits"]),
        export_case(out, "mobilenet_v3_small",
                    randomize_batchnorm(torchvision.models.mobilenet_v3_small(weights=None), 3),
                    (x64,), ["images"], ["logits"]),
        export_case(out, "tiny_transformer", models.TinyTransformer(), models.TinyTransformer.make_inputs(0),
                    ["tokens"], ["encoded"]),
        export_case(out, "tuple_twice", models.TupleTwice(), models.TupleTwice.make_inputs(0),
                    ["x"], ["out", "h"]),
        export_case(out, "yolo_like", randomize_batchnorm(models.YoloLike(), 4), models.YoloLike.make_inputs(0),
                    ["images"], ["p8", "p16", "p32"]),
    ]
    by_name = {c["name"]: c for c in cases}
    cases.append(plant(by_name["yolo_like"], "resize_linear", resize_to_linear,
                       {"module": "up", "call": 0, "node": "/up/Resize"}))
    cases.append(plant(by_name["resnet18"], "leaky_relu", relu_to_leaky,
                       {"module": "layer2.0.relu", "call": 1, "node": "/layer2/layer2.0/relu_1/Relu"}))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: alignment_cases.py OUT_DIR")
    main(sys.argv[1])
