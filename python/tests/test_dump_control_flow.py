"""dump() of models with torch.cond (issue 41): torch traces cond's branches
even in eager mode, and the dumper's hooks inside them broke that capture
("This higher order operator doesn't work unless it is captured completely",
cut after "Got graph break/error:"). The hooks now leave torch's capture
alone, the taken branch is dumped, and failures are told whole."""

import os

import numpy as np
import pytest
import torch

import parity.torch as ptorch
from conftest import HAS_DYNAMO, check_manifest, load_tensor, run_module
from parity.torch.errors import one_line, the_rest
from zoo.decode import CondBranches

ort = pytest.importorskip("onnxruntime")


def _expected(model, x):
    with torch.no_grad():
        return model.eval()(x).numpy()


def test_cond_model_dumps_the_taken_branch(tmp_dir):
    torch.manual_seed(0)
    model = CondBranches()
    (x,) = model.make_inputs(0)
    m = ptorch.dump(model, (x,), tmp_dir)
    check_manifest(tmp_dir)
    with torch.no_grad():
        taken = "big" if float(model.fc(x).sum()) > 0 else "small"
    modules = [layer["module"] for layer in m["layers"]]
    assert modules[0] == "fc" and taken in modules
    assert ({"big", "small", "small.0", "small.1"} - {taken, f"{taken}.0", f"{taken}.1"}).isdisjoint(modules)
    assert np.allclose(load_tensor(tmp_dir, m["outputs"]["output_0"]), _expected(model, x), atol=1e-6)
    assert "outputs_fp64" in m  # the unhooked float64 run goes through torch's own cond


def test_cond_bound_before_the_dump_runs_with_its_branch_modules_unrecorded(tmp_dir):
    torch.manual_seed(0)
    model = CondBranches(bound=True)
    (x,) = model.make_inputs(0)
    m = ptorch.dump(model, (x,), tmp_dir)
    assert [layer["module"] for layer in m["layers"]] == ["fc"]
    assert np.allclose(load_tensor(tmp_dir, m["outputs"]["output_0"]), _expected(model, x), atol=1e-6)


@pytest.mark.skipif(not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")
def test_cond_model_exports_and_dumps_through_the_command_line(tmp_dir):
    out, path = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run_module("parity.torch", "dump", "zoo.decode:CondBranches", "-o", out, "--export", path,
                   "--exporter", "dynamo", "--output-names", "y", "--sizes", "none")
    assert r.returncode == 0, r.stderr
    m = check_manifest(out)
    modules = {layer["module"] for layer in m["layers"]}
    assert "fc" in modules and ("big" in modules) != ("small" in modules)  # one branch taken, and dumped
    feeds = {n: load_tensor(out, f) for n, f in m["inputs"].items()}
    got = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert np.allclose(got, load_tensor(out, m["outputs"]["y"]), atol=1e-5)


@pytest.mark.skipif(not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")
def test_a_branch_torch_cannot_capture_is_told_whole(tmp_dir):
    out, path = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run_module("parity.torch", "dump", "zoo.decode:CondBranches", "--kwargs", '{"side_effect": true}',
                   "-o", out, "--export", path, "--exporter", "dynamo")
    assert r.returncode == 3
    lines = r.stderr.strip().splitlines()
    # the summary goes past "Got graph break/error:" and names the user's line
    assert "Got graph break/error: HOP: Unsafe side effect" in lines[0], lines[0]
    assert "(raised at decode.py:" in lines[0] and "SEEN.append(t)" in lines[0]
    assert lines[1] == "  the whole error:"
    assert any("from user code:" in line for line in lines[2:]) and "Mutating a variable" in r.stderr
    assert not os.path.exists(os.path.join(out, "manifest.json"))


def test_one_line_joins_a_line_ending_in_a_colon_and_the_rest_is_whole():
    inner = RuntimeError("Got graph break/error:\n\nHOP: Unsafe side effect\n  Explanation: more")
    outer = ValueError("\x1b[96mFailed\x1b[0m to export\n\n" + str(inner))
    outer.__cause__ = inner
    assert one_line(outer) == "ValueError: RuntimeError: Got graph break/error: HOP: Unsafe side effect"
    rest = the_rest(outer)
    assert rest.startswith("ValueError: Failed to export") and "Explanation: more" in rest
    assert "RuntimeError" not in rest  # the outer message already quotes the inner one
