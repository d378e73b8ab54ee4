"""Verdicts users can trust (issue 15), end to end with torchvision:
mobilenet_v3_small with random weights has logits of ~1e-9; with one
convolution's weights doubled, `parity check --torch` must fail by default
(a fixed atol 1e-4 passed it), while the healthy export passes.

Needs torchvision, onnx and the built parity binary (PARITY_BINARY, else
build/parity in the repository); skipped otherwise. Slow (~2 minutes: the
dynamo export)."""

import os
import subprocess
import sys

import numpy as np
import pytest

torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PARITY = os.environ.get("PARITY_BINARY", os.path.join(REPO, "build", "parity"))
pytestmark = pytest.mark.skipif(not os.access(PARITY, os.X_OK), reason=f"no parity binary at {PARITY}")


@pytest.fixture(scope="module")
def mobilenet(tmp_path_factory):
    d = tmp_path_factory.mktemp("mobilenet")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    r = subprocess.run([sys.executable, "-m", "parity_torch", "dump", "torchvision.models:mobilenet_v3_small",
                        "--kwargs", '{"weights": null}', "--input", "images=1x3x224x224", "--seed", "0",
                        "--output-names", "logits", "-o", str(d / "dump"), "--export", str(d / "m.onnx")],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # One convolution's weights doubled, the rest of the export untouched.
    m = onnx.load(str(d / "m.onnx"))
    conv = [n for n in m.graph.node if n.op_type == "Conv"][4]
    w = next(i for i in m.graph.initializer if i.name == conv.input[1])
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) * 2, w.name))
    onnx.save(m, str(d / "doubled.onnx"), save_as_external_data=True, location="doubled.onnx.data")
    return d


def check(model, dump, *extra):
    return subprocess.run([PARITY, "check", str(model), "--torch", str(dump), "--runs", "1", "--warmup", "0",
                           "--no-locate", *extra], capture_output=True, text=True)


def test_the_dump_has_fp64_outputs_by_default(mobilenet):
    import json
    manifest = json.load(open(mobilenet / "dump" / "manifest.json"))
    assert manifest["outputs_fp64"] == {"logits": "fp64/output_logits.npy"}
    logits = np.load(mobilenet / "dump" / manifest["outputs"]["logits"])
    assert np.abs(logits).max() < 1e-6  # the scale that hid the fault


def test_doubled_conv_weights_fail_by_default(mobilenet):
    r = check(mobilenet / "doubled.onnx", mobilenet / "dump")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("FAIL")
    assert "numerics.torch.logits" in r.stdout
    assert "calibrated" in r.stdout  # the band came from PyTorch's own fp32-vs-fp64 error


def test_doubled_conv_weights_passed_a_fixed_atol(mobilenet):
    # The blind spot itself: what `--atol 1e-4` (NumPy's allclose) says, with a warning now.
    r = check(mobilenet / "doubled.onnx", mobilenet / "dump", "--atol", "1e-4")
    assert "at least the reference's largest magnitude" in r.stdout, r.stdout


def test_the_healthy_export_passes(mobilenet):
    r = check(mobilenet / "m.onnx", mobilenet / "dump")
    assert "numerics.torch" not in r.stdout.split("worst outputs:")[0], r.stdout
