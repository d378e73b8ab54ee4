"""The model zoo (python/tests/zoo), built once per run into the shared cache
($PARITY_TORCH_CACHE, default <repo>/build/torch-cache): each export loads in
ONNX Runtime and computes the dump's outputs, the dump records its export,
dynamo exports carry module scopes, the detector is dynamic, and parity's
own `check` passes on each (with $PARITY_BINARY)."""

import inspect
import json
import os
import subprocess

import numpy as np
import onnx
import pytest
import torch

ort = pytest.importorskip("onnxruntime")
if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
    pytest.skip(f"the zoo needs torch's dynamo exporter (torch >= 2.6; this is {torch.__version__})",
                allow_module_level=True)
for _module in ("torchvision", "transformers", "timm"):
    pytest.importorskip(_module)

from zoo import cache as zoo  # noqa: E402
from parity.torch.exporter import EXPORTERS, _sha256  # noqa: E402
from parity.torch.flatten import flatten  # noqa: E402
from zoo.zoo_models import ZOO, build_model  # noqa: E402

from conftest import check_manifest, load_tensor  # noqa: E402

CASES = [(name, exporter) for name in ZOO for exporter in EXPORTERS]
IDS = [f"{n}-{e}" for n, e in CASES]

# Exports this torch is known not to make; each other one must succeed.
KNOWN_FAILURES = {}


@pytest.fixture(scope="session")
def zoo_cache():
    cache = zoo.default_cache_dir()
    summary = zoo.build(cache)
    return cache, summary


def _entry(zoo_cache, name, exporter):
    cache, summary = zoo_cache
    stamp = summary["entries"][f"{name}/{exporter}"]
    if stamp["status"] != "ok":
        pytest.skip(f"{name} does not export with {exporter}: {stamp['error']}")
    d = zoo.entry_dir(cache, name, exporter)
    return d, os.path.join(d, "model.onnx"), os.path.join(d, "dump")


def _session(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _assert_close(got, ref, name, rel=1e-4):
    """fp32 agreement relative to the output's scale (its largest magnitude)."""
    assert got.shape == ref.shape, (name, got.shape, ref.shape)
    scale = max(float(np.abs(ref).max()), 1e-6)
    err = float(np.abs(got.astype(np.float64) - ref.astype(np.float64)).max())
    assert err <= rel * scale, f"{name}: max |diff| {err:.3g} > {rel} x scale {scale:.3g}"


def test_zoo_exports_everything_not_known_to_fail(zoo_cache):
    _, summary = zoo_cache
    failed = {k: v.get("error") for k, v in summary["entries"].items() if v["status"] != "ok"}
    assert set(failed) == set(KNOWN_FAILURES), failed
    assert set(summary["entries"]) == {f"{n}/{e}" for n, e in CASES}


def test_zoo_is_idempotent(zoo_cache):
    cache, _ = zoo_cache
    lines = []
    zoo.build(cache, only=["tuple_twice"], log=lines.append)
    assert lines and all(line.endswith("[cached]") for line in lines), lines


@pytest.mark.parametrize("name, exporter", CASES, ids=IDS)
def test_export_runs_in_ort_and_matches_dump(zoo_cache, name, exporter):
    _, model, dump = _entry(zoo_cache, name, exporter)
    m = check_manifest(dump)
    feeds = {k: load_tensor(dump, rel) for k, rel in m["inputs"].items()}
    session = _session(model)
    assert [i.name for i in session.get_inputs()] == list(feeds)
    outputs = session.run(list(m["outputs"]), feeds)
    for (out_name, rel), got in zip(m["outputs"].items(), outputs):
        _assert_close(got, load_tensor(dump, rel), out_name)


@pytest.mark.parametrize("name, exporter", CASES, ids=IDS)
def test_dump_records_its_export(zoo_cache, name, exporter):
    d, model, dump = _entry(zoo_cache, name, exporter)
    m = check_manifest(dump)
    rec = m["export"]
    assert rec["exporter"] == exporter
    assert rec["onnx_sha256"] == _sha256(model)
    assert list(m["inputs"]) == rec["onnx_input_names"] == list(ZOO[name].input_names)
    assert list(m["outputs"]) == rec["onnx_output_names"] == list(ZOO[name].output_names)
    assert "onnx_external_data" not in rec  # weights inside model.onnx: the sha256 covers them
    # fp64 outputs by default, close to fp32 ones
    assert list(m["outputs_fp64"]) == list(m["outputs"])
    for out_name, rel in m["outputs_fp64"].items():
        ref64 = load_tensor(dump, rel)
        assert ref64.dtype == np.float64
        _assert_close(load_tensor(dump, m["outputs"][out_name]), ref64, out_name, rel=1e-3)
    with np.load(os.path.join(d, "inputs.npz")) as inputs:
        assert sorted(inputs.files) == sorted(m["inputs"])


@pytest.mark.parametrize("name", list(ZOO))
def test_dynamo_nodes_carry_module_scopes(zoo_cache, name):
    _, model, dump = _entry(zoo_cache, name, "dynamo")
    graph = onnx.load(model).graph
    scoped = {}
    for node in graph.node:
        props = {p.key: p.value for p in node.metadata_props}
        if "pkg.torch.onnx.name_scopes" in props:
            scoped[node.name] = eval(props["pkg.torch.onnx.name_scopes"], {})  # a Python list literal
    # torch 2.14: all nodes but a rare Constant (bert 85/85, gpt2 96/98, tuple_twice 6/7)
    assert len(scoped) >= 0.75 * len(graph.node), (len(scoped), len(graph.node))
    # Every module a scope names (entries between the root '' and the op) was dumped under that path.
    dumped = {layer["module"] for layer in check_manifest(dump)["layers"]}
    scope_modules = {path for scopes in scoped.values() for path in scopes[1:-1]}
    assert scope_modules, "no node is inside a submodule"
    assert scope_modules <= dumped, sorted(scope_modules - dumped)[:5]


DYNAMIC = [(n, e) for n, spec in ZOO.items() if spec.dynamic_axes for e in EXPORTERS]


@pytest.mark.parametrize("name, exporter", DYNAMIC, ids=[f"{n}-{e}" for n, e in DYNAMIC])
def test_dynamic_axes_are_symbolic_and_run_at_another_size(zoo_cache, name, exporter):
    """The detector at another batch, height and width; the transformers at
    another batch and sequence length; resnet18 at another batch."""
    spec = ZOO[name]
    _, model_path, _ = _entry(zoo_cache, name, exporter)
    proto = onnx.load(model_path)
    inputs = {v.name: v for v in proto.graph.input}
    for input_name, axes in spec.dynamic_axes.items():
        if input_name not in inputs:
            continue  # an output's axes: torch.export names those itself (dynamo)
        dims = inputs[input_name].type.tensor_type.shape.dim
        assert {a: dims[a].dim_param for a in axes} == axes, input_name
    model, example = build_model(spec)
    other = spec.other_inputs()
    assert [tuple(t.shape) for t in other] != [tuple(t.shape) for t in example]
    model.eval()
    with torch.no_grad():
        expected = [t.numpy() for t in flatten(model(*other))]
    got = _session(model_path).run(list(spec.output_names), {
        n: t.numpy() for n, t in zip(spec.input_names, other)})
    for out_name, g, e in zip(spec.output_names, got, expected):
        _assert_close(g, e, f"{out_name} at {[tuple(t.shape) for t in other]}")


def test_dump_is_right_around_inplace_ops(zoo_cache):
    """torchvision's BasicBlock: bn1 -> ReLU(inplace=True), and `out += identity`
    after bn2. A hook that kept a view would see the later values."""
    _, _, dump = _entry(zoo_cache, "resnet18", EXPORTERS[0])
    m = check_manifest(dump)
    get = {(l["module"], l["call"]): load_tensor(dump, l["file"]) for l in m["layers"]}
    bn1, relu0 = get[("layer1.0.bn1", 0)], get[("layer1.0.relu", 0)]
    assert bn1.min() < 0
    assert np.array_equal(relu0, np.maximum(bn1, 0))
    block_in, bn2, block_out = get[("maxpool", 0)], get[("layer1.0.bn2", 0)], get[("layer1.0", 0)]
    assert not np.allclose(bn2, np.maximum(bn2 + block_in, 0))  # bn2 recorded before the +=
    assert np.allclose(block_out, np.maximum(bn2 + block_in, 0), atol=1e-6)
    assert np.array_equal(get[("layer1.0.relu", 1)], block_out)


@pytest.mark.parametrize("name, exporter", CASES, ids=IDS)
def test_parity_check_passes(zoo_cache, name, exporter, tmp_path):
    binary = os.environ.get("PARITY_BINARY")
    if not binary:
        pytest.skip("PARITY_BINARY is not set (the path of parity's C++ binary, e.g. build/parity)")
    d, model, dump = _entry(zoo_cache, name, exporter)
    report = tmp_path / "report.json"
    r = subprocess.run([binary, "check", model, "--torch", dump, "--inputs", os.path.join(d, "inputs.npz"),
                        "--runs", "2", "--warmup", "1", "--json", str(report)],
                       capture_output=True, text=True, timeout=600)
    failed = []
    if report.exists():
        failed = json.loads(report.read_text()).get("failed_tests", [])
    assert r.returncode == 0, (f"parity check exited {r.returncode}: {failed or r.stderr.strip()[-2000:]}")


def test_a_failed_export_is_recorded_and_the_zoo_goes_on(tmp_path, monkeypatch):
    from zoo import models
    from zoo.zoo_models import ZooModel
    monkeypatch.setitem(ZOO, "data_dependent", ZooModel(
        "data_dependent", models.DataDependent, lambda: models.DataDependent.make_inputs(0), ("x",), ("y",)))
    lines = []
    summary = zoo.build(str(tmp_path), exporters=["dynamo"], only=["data_dependent", "tuple_twice"],
                        log=lines.append)
    failed = summary["entries"]["data_dependent/dynamo"]
    assert failed["status"] == "failed" and failed["phase"] == "export"
    assert failed["error"].startswith("dynamo export failed: ") and "\n" not in failed["error"]
    assert summary["entries"]["tuple_twice/dynamo"]["status"] == "ok"
    assert lines[0].startswith("data_dependent/dynamo: FAILED (export): dynamo export failed:")
    with open(tmp_path / "zoo.json", encoding="utf-8") as f:
        assert json.load(f)["entries"]["data_dependent/dynamo"]["status"] == "failed"
    # a failure is a complete entry: not retried while nothing changed
    again = []
    zoo.build(str(tmp_path), exporters=["dynamo"], only=["data_dependent"], log=again.append)
    assert again[0].endswith("[cached]")
