"""PyTorch <-> ONNX alignment on the zoo (python/tests/zoo), both exporters,
through parity's binary ($PARITY_BINARY): healthy exports align by structure
and never diverge; planted export faults are named at their PyTorch module.

The planted faults edit the exported ONNX file (the dump stays healthy), one
node each: a Conv/Gemm/MatMul weight x1.01, an activation swapped (Relu ->
LeakyRelu, Sigmoid -> HardSigmoid), a Resize mode changed, an attention-mask
constant changed, an Add operand replaced by the other one. A fault whose
effect does not reach the outputs (measured with onnxruntime) is not planted.

The expected module is derived here, independently of parity's aligner: for a
dynamo export the innermost module in the node's `pkg.torch.onnx.name_scopes`;
for a TorchScript export the dumped module whose scope name (torch's rule,
module path -> scope, the opposite direction of parity's) is the longest
prefix of the node's name. A Conv whose eval BatchNorm was folded into it is
named by that BatchNorm (dynamo already scopes the fused node there).
"""

import ast
import json
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

ort = pytest.importorskip("onnxruntime")
zoo = pytest.importorskip("zoo.cache")
from parity.torch.exporter import EXPORTERS  # noqa: E402
from zoo.zoo_models import ZOO  # noqa: E402

BINARY = os.environ.get("PARITY_BINARY")
pytestmark = pytest.mark.skipif(not BINARY, reason="PARITY_BINARY is not set (parity's C++ binary)")

MAX_FAULTS_PER_EXPORT = 6


@pytest.fixture(scope="session")
def zoo_entries():
    cache = zoo.default_cache_dir()
    summary = zoo.build(cache)
    entries = []
    for name in ZOO:
        for exporter in EXPORTERS:
            if summary["entries"][f"{name}/{exporter}"]["status"] == "ok":
                d = zoo.entry_dir(cache, name, exporter)
                entries.append((name, exporter, d))
    return entries


def align(model, dump, out_json):
    r = subprocess.run([BINARY, "align", model, "--torch", dump, "--json", out_json],
                       capture_output=True, text=True, timeout=600)
    report = json.load(open(out_json)) if os.path.exists(out_json) else None
    return r.returncode, report, r.stdout + r.stderr


# --- the expected module of a node (not parity's rule) -----------------------

def torch_scope_name(module, call, called):
    """torch's TorchScript scope for a module call: one component per called
    module on the path, each the path from its last non-numeric atom on."""
    atoms = module.split(".")
    parts = []
    for end in range(len(atoms)):
        if end + 1 < len(atoms) and ".".join(atoms[:end + 1]) not in called:
            continue
        first = max(k for k in range(end + 1) if not atoms[k].isdigit()) \
            if any(not atoms[k].isdigit() for k in range(end + 1)) else 0
        parts.append(".".join(atoms[first:end + 1]))
    return "/" + "/".join(parts) + (f"_{call}" if call else "")


def expected_module(node, exporter, manifest):
    if exporter == "dynamo":
        meta = {p.key: p.value for p in node.metadata_props}
        scopes = ast.literal_eval(meta.get("pkg.torch.onnx.name_scopes", "[]"))
        modules = [s for s in scopes[1:-1] if s]
        return modules[-1] if modules else None
    called = {layer["module"] for layer in manifest["layers"]}
    best = None
    for layer in manifest["layers"]:
        scope = torch_scope_name(layer["module"], layer["call"], called)
        if node.name.startswith(scope + "/") and (best is None or len(scope) > len(best[0])):
            best = (scope, layer["module"])
    return best[1] if best else None


# --- planting ----------------------------------------------------------------

def initializer(model, name):
    return next((i for i in model.graph.initializer if i.name == name), None)


def scale_weight(model, node):
    for k in (1, 0):
        init = initializer(model, node.input[k]) if len(node.input) > k else None
        if init is not None and init.data_type == onnx.TensorProto.FLOAT and init.dims and np.prod(init.dims) > 1:
            a = numpy_helper.to_array(init).astype(np.float32) * np.float32(1.01)
            init.CopyFrom(numpy_helper.from_array(a, init.name))
            return True
    return False


def swap_activation(model, node):
    if node.op_type == "Relu":
        node.op_type = "LeakyRelu"
        node.attribute.append(onnx.helper.make_attribute("alpha", 0.1))
        return True
    if node.op_type == "Sigmoid":
        node.op_type = "HardSigmoid"
        return True
    return False


def change_resize(model, node):
    for a in node.attribute:
        if a.name == "mode":
            a.s = b"linear" if a.s != b"linear" else b"nearest"
            return True
    node.attribute.append(onnx.helper.make_attribute("mode", "linear"))
    return True


def change_mask_constant(model, node):
    """A Where/Add/Mul reading a scalar constant at float32's extreme (the
    masked-attention fill value): make it -1."""
    for name in node.input:
        init = initializer(model, name)
        if init is not None and init.data_type == onnx.TensorProto.FLOAT and np.prod(init.dims or [1]) == 1:
            v = numpy_helper.to_array(init)
            if np.all(v < -1e4):
                init.CopyFrom(numpy_helper.from_array(np.full_like(v, -1.0), init.name))
                return True
    return False


def swap_add_operand(model, node, shapes):
    a, b = node.input[0], node.input[1]
    if initializer(model, a) or initializer(model, b) or shapes.get(a) is None or shapes.get(a) != shapes.get(b):
        return False
    node.input[1] = a
    return True


def tensor_shapes(model):
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {}
    for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = v.type.tensor_type.shape.dim
        shapes[v.name] = tuple(d.dim_value if d.HasField("dim_value") else d.dim_param for d in dims)
    return shapes


def candidate_faults(model):
    """(node index, kind) pairs, a few of each kind, spread over the graph."""
    shapes = tensor_shapes(model)
    by_kind = {}
    for i, n in enumerate(model.graph.node):
        if n.op_type in ("Conv", "Gemm", "MatMul") and any(
                initializer(model, x) is not None for x in n.input[:2]):
            by_kind.setdefault("weight", []).append(i)
        elif n.op_type in ("Relu", "Sigmoid"):
            by_kind.setdefault("activation", []).append(i)
        elif n.op_type == "Resize":
            by_kind.setdefault("resize", []).append(i)
        elif n.op_type in ("Where", "Add", "Mul") and any(
                (init := initializer(model, x)) is not None and init.data_type == onnx.TensorProto.FLOAT
                and np.prod(init.dims or [1]) == 1 and np.all(numpy_helper.to_array(init) < -1e4) for x in n.input):
            by_kind.setdefault("mask", []).append(i)
        elif n.op_type == "Add" and len(n.input) == 2 and shapes.get(n.input[0]) is not None \
                and shapes.get(n.input[0]) == shapes.get(n.input[1]) \
                and not any(initializer(model, x) for x in n.input):
            by_kind.setdefault("add_operand", []).append(i)
    picks = []
    quota = {"weight": 2, "activation": 1, "resize": 1, "mask": 1, "add_operand": 1}
    for kind, nodes in by_kind.items():
        k = min(quota[kind], len(nodes))
        picks += [(nodes[int(j * (len(nodes) - 1) / max(k - 1, 1))] if k > 1 else nodes[len(nodes) // 2], kind)
                  for j in range(k)]
    return picks[:MAX_FAULTS_PER_EXPORT], shapes


def plant(path, index, kind, shapes, out):
    m = onnx.load(path)
    node = m.graph.node[index]
    done = {"weight": scale_weight, "activation": swap_activation, "resize": change_resize,
            "mask": change_mask_constant}.get(kind, lambda mm, n: swap_add_operand(mm, n, shapes))(m, node)
    if not done:
        return None
    onnx.save(m, out)
    return node


def outputs(path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return s.run(None, {k: v for k, v in feeds.items() if k in {i.name for i in s.get_inputs()}})


def visible(healthy, faulty):
    """The fault changes some output by more than 0.1% of its scale."""
    for h, f in zip(healthy, faulty):
        h, f = np.asarray(h, np.float64), np.asarray(f, np.float64)
        scale = max(np.max(np.abs(h)), 1e-30)
        if not np.all(np.isfinite(f)) or np.max(np.abs(f - h)) > 1e-3 * scale:
            return True
    return False


# --- the tests ---------------------------------------------------------------

def test_healthy_exports_align_by_structure_and_never_diverge(zoo_entries, tmp_path):
    rows, totals = [], {}
    for name, exporter, d in zoo_entries:
        code, report, text = align(os.path.join(d, "model.onnx"), os.path.join(d, "dump"),
                                   str(tmp_path / f"{name}-{exporter}.json"))
        assert report is not None, f"{name}/{exporter}: {text[-2000:]}"
        s = report["summary"]
        rows.append(f"{name:>20} {exporter:>11}: {s['leaves_by_structure']}/{s['leaves_aligned']} leaves by "
                    f"structure, {s['folded']} folded, {s['aligned_by_value']} by value, "
                    f"{s['unaligned'] - s['folded']} none")
        t = totals.setdefault(exporter, [0, 0])
        t[0] += s["leaves_by_structure"]
        t[1] += s["leaves_aligned"]
        assert report["first_divergence"] is None, f"{name}/{exporter}: {report['first_divergence']}"
        assert code == 0, f"{name}/{exporter}: {text[-2000:]}"
    print("\n" + "\n".join(rows))
    assert len({n for n, _, _ in zoo_entries}) >= 8
    for exporter, (structural, aligned) in totals.items():
        print(f"{exporter}: {structural}/{aligned} = {structural / aligned:.1%} of aligned leaves by structure")
        assert structural >= 0.9 * aligned, exporter


def test_planted_faults_are_named_at_their_module(zoo_entries, tmp_path):
    results = []
    for name, exporter, d in zoo_entries:
        model_path, dump = os.path.join(d, "model.onnx"), os.path.join(d, "dump")
        manifest = json.load(open(os.path.join(dump, "manifest.json")))
        feeds = dict(np.load(os.path.join(d, "inputs.npz")))
        healthy = outputs(model_path, feeds)
        model = onnx.load(model_path)
        picks, shapes = candidate_faults(model)
        for index, kind in picks:
            node = model.graph.node[index]
            want = expected_module(node, exporter, manifest)
            if want is None:
                continue  # a root-level op: no module to name
            faulty = str(tmp_path / f"{name}-{exporter}-{index}.onnx")
            if plant(model_path, index, kind, shapes, faulty) is None:
                continue
            try:
                if not visible(healthy, outputs(faulty, feeds)):
                    continue
            except Exception:  # the edit made an invalid model (shapes that only looked equal)
                continue
            code, report, text = align(faulty, dump, faulty + ".json")
            got = report and report.get("first_divergence")
            layers = {(a["module"], a["call"]): a for a in report["alignment"]} if report else {}
            named = bool(got) and (got["module"] == want or (
                "BatchNorm" in (got.get("type") or "") and layers.get((want, 0), {}).get("folded")))
            results.append((name, exporter, kind, node.name, want, got["module"] if got else None, code, named,
                            bool(got) or bool(report and report.get("unexplained"))))
    lines = [f"{'ok ' if r[7] else 'MISS'} {r[0]}/{r[1]} {r[2]} {r[3]}: want {r[4]}, got {r[5]} (exit {r[6]})"
             for r in results]
    named = sum(r[7] for r in results)
    print("\n" + "\n".join(lines) + f"\n{named}/{len(results)} planted faults named at their module")
    assert len(results) >= 40
    assert all(r[6] == 1 for r in results), [line for line, r in zip(lines, results) if r[6] != 1]
    assert all(r[8] for r in results), "every fault is reported as a divergence"
    assert named >= 0.95 * len(results), [line for line in lines if line.startswith("MISS")]


def test_inspect_gives_a_checker_verdict_and_the_node_scopes(zoo_entries):
    seen = 0
    for name, exporter, d in zoo_entries:
        r = subprocess.run([BINARY, "inspect", os.path.join(d, "model.onnx")], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, f"{name}/{exporter}: {r.stderr}"
        assert "checker       pass (ONNX 1.23" in r.stdout, f"{name}/{exporter}:\n{r.stdout}"
        assert "skipped" not in r.stdout, f"{name}/{exporter}:\n{r.stdout}"
        source = "metadata_props" if exporter == "dynamo" else "node names"
        assert f"node scopes" in r.stdout and source in r.stdout, f"{name}/{exporter}:\n{r.stdout}"
        seen += exporter == "dynamo"
    assert seen >= 8
