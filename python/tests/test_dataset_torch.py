"""check --dataset with PyTorch (docs/dataset.md): a torch.nn.Module as the
reference, run on each batch (parity._dataset.module_reference_args, what
parity.check(model, torch_dump=module, dataset=...) does, then the CLI's
--reference-outputs), and the ranking by PyTorch module of a torch export.
squeezenet1_1 with random weights at 32x32; samples made in the test."""

import json
import os
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
from parity import _dataset  # noqa: E402

from parity_binary import PARITY, REPO, needs_parity  # noqa: E402
pytestmark = needs_parity
SIZE = 32
PLANTED = "features.4.expand1x1"


def squeezenet(scale=None):
    torch.manual_seed(0)
    m = torchvision.models.squeezenet1_1(weights=None, num_classes=10).eval()
    if scale is not None:
        with torch.no_grad():
            m.get_submodule(PLANTED).weight.mul_(scale)
    return m


def export(module, path):
    torch.onnx.export(module, torch.randn(1, 3, SIZE, SIZE), str(path), input_names=["input"],
                      output_names=["logits"], opset_version=17, dynamo=False)
    return path


def samples(n, seed=0):
    rng = np.random.default_rng(seed)
    return ({"input": rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)} for _ in range(n))


def check(*args):
    r = subprocess.run([PARITY, "check", *map(str, args)], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def schema_valid(data):
    import jsonschema
    with open(os.path.join(REPO, "docs", "dataset.schema.json"), encoding="utf-8") as f:
        jsonschema.validate(data, json.load(f))
    return data


def test_module_reference_healthy_export_agrees_planted_fault_flips(tmp_path):
    module = squeezenet()
    healthy, faulty = export(module, tmp_path / "ok.onnx"), export(squeezenet(scale=3.0), tmp_path / "bad.onnx")
    work = tmp_path / "w"
    work.mkdir()
    # 150 samples in batches of 64: the module sees 3 batches, one is kept at a time.
    args = _dataset.module_reference_args(module, samples(150), ["input"], ["logits"], str(work), batch_size=64)
    assert sorted(os.listdir(work / "reference"))[:2] == ["sample000000.npz", "sample000001.npz"]
    rc, stdout, stderr = check(healthy, *args, "--json", tmp_path / "ok.json")
    assert rc == 0, stdout + stderr
    ok = schema_valid(json.loads((tmp_path / "ok.json").read_text()))
    assert ok["count"] == 150 and ok["reference"].startswith("outputs:")
    assert ok["outputs"][0]["top1_agreement"] == 1.0 and ok["outputs"][0]["failed"] == 0
    rc, stdout, stderr = check(faulty, *args, "--json", tmp_path / "bad.json")
    assert rc == 1, stdout + stderr
    bad = schema_valid(json.loads((tmp_path / "bad.json").read_text()))
    logits = bad["outputs"][0]
    assert logits["failed"] > 0 and 0 < len(logits["flipped"]) <= 150
    assert logits["top1_agreement"] < 1 and "top-1 agreement" in stdout
    assert any("not located" in n for n in bad["notes"])


def test_module_reference_needs_in_memory_samples(tmp_path):
    with pytest.raises(ValueError, match="iterable of dicts"):
        _dataset.module_reference_args(squeezenet(), str(tmp_path), ["input"], ["logits"], str(tmp_path))


def test_python_check_takes_a_module_reference(tmp_path):
    try:
        import parity
        from parity import _core  # noqa: F401
    except ImportError:
        pytest.skip("parity.check needs the built package (make python-package)")
    module = squeezenet()
    report = parity.check(export(module, tmp_path / "m.onnx"), torch_dump=module, dataset=samples(20), batch_size=8)
    assert report.passed and report.data["count"] == 20


def test_ranking_names_the_pytorch_module_of_a_planted_fault(tmp_path):
    healthy, faulty = export(squeezenet(), tmp_path / "ok.onnx"), export(squeezenet(scale=3.0), tmp_path / "bad.onnx")
    data = tmp_path / "data"
    data.mkdir()
    for i, s in enumerate(samples(40, seed=2)):
        np.savez(data / f"s{i:03d}.npz", **s)
    out = tmp_path / "r"
    rc, stdout, stderr = check(faulty, "--reference-model", healthy, "--dataset", data, "--report", out)
    assert rc == 1, stdout + stderr
    r = schema_valid(json.loads((out / "report.json").read_text()))
    top = r["module_ranking"][0]
    assert top["module"] == PLANTED, r["module_ranking"]
    located = [s for s in r["locate"]["samples"] if s["first_divergence"]]
    assert top["samples"] == len(located) > 0 and all(s["module"] == PLANTED for s in located)
    assert r["module_headline"] in stdout and f"in module {PLANTED}" in r["module_headline"]
    assert "by PyTorch module" in (out / "report.html").read_text()
