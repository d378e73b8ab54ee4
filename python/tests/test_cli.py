"""python3 -m parity_torch dump ..."""

import os
import subprocess
import sys

import onnx
import pytest

from conftest import check_manifest

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, PYTHONPATH=os.path.dirname(HERE), OMP_NUM_THREADS="1",
           PYTHONWARNINGS="ignore")


def run(*argv):
    return subprocess.run([sys.executable, "-m", "parity_torch", *argv], env=ENV,
                          capture_output=True, text=True, timeout=300)


def test_dump_conv_bn_relu(tmp_dir):
    out = os.path.join(tmp_dir, "d")
    r = run("dump", "parity_torch.models:ConvBnRelu", "--input", "input=1x3x32x32", "-o", out)
    assert r.returncode == 0, r.stderr
    m = check_manifest(out)
    assert m["inputs"] == {"input": "input_input.npy"}
    assert [l["module"] for l in m["layers"]] == ["conv", "bn", "relu"]
    assert m["input_details"][0]["shape"] == [1, 3, 32, 32]


def test_dump_with_export_dynamic_int_input_and_fp64(tmp_dir):
    out, model = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run("dump", "parity_torch.models:YoloLike", "-o", out, "--seed", "3", "--fp64",
            "--export", model, "--opset", "17", "--dynamic", "images:0:batch",
            "--output-names", "p3,p4,p5")
    assert r.returncode == 0, r.stderr
    m = check_manifest(out)
    assert m["export"]["dynamic_axes"] == {"images": {"0": "batch"}}
    assert m["export"]["opset"] == 17 and m["seed"] == 3
    assert list(m["outputs"]) == ["p3", "p4", "p5"] == list(m["outputs_fp64"])
    onnx.checker.check_model(onnx.load(model))


@pytest.mark.parametrize("argv, needle", [
    (["dump", "no_such_module:Model", "-o", "X"], "cannot import"),
    (["dump", "parity_torch.models", "-o", "X"], "MODULE:FACTORY"),
    (["dump", "parity_torch.models:Nope", "-o", "X"], "has no 'Nope'"),
    (["dump", "parity_torch.models:ConvBnRelu", "--input", "input=1x3xfoo", "-o", "X"], "NAME=SHAPE"),
    (["dump", "parity_torch.models:ConvBnRelu", "--input", "input=1x3:complex9", "-o", "X"], "dtype"),
    (["dump", "parity_torch.models:ConvBnRelu", "--kwargs", "{bad", "-o", "X"], "--kwargs"),
    (["dump", "parity_torch.models:ConvBnRelu", "--no-such-flag", "-o", "X"], "unrecognized"),
    (["dump", "parity_torch.models:ConvBnRelu"], "required"),
    ([], "expected a command"),
])
def test_bad_usage_exits_2_with_one_line(argv, needle):
    r = run(*argv)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert r.stdout == ""
