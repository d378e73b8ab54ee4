"""The PyTorch side's command line, `python3 -m parity.torch dump ...` (not the
C++ CLI: that is tests/e2e and the golden cases). The models are the zoo's
(python/tests/zoo/models.py), on PYTHONPATH beside the package."""

import inspect
import os

import onnx
import pytest
import torch

from conftest import HAS_DYNAMO, check_manifest, run_module

def run(*argv):
    return run_module("parity.torch", *argv)


def test_dump_conv_bn_relu(tmp_dir):
    out = os.path.join(tmp_dir, "d")
    r = run("dump", "zoo.models:ConvBnRelu", "--input", "input=1x3x32x32", "-o", out)
    assert r.returncode == 0, r.stderr
    m = check_manifest(out)
    assert m["inputs"] == {"input": "input_input.npy"}
    assert [l["module"] for l in m["layers"]] == ["conv", "bn", "relu"]
    assert m["input_details"][0]["shape"] == [1, 3, 32, 32]


def test_dump_with_export_dynamic_int_input_and_fp64(tmp_dir):
    out, model = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run("dump", "zoo.models:YoloLike", "-o", out, "--seed", "3", "--fp64",
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
    (["dump", "zoo.models", "-o", "X"], "MODULE:FACTORY"),
    (["dump", "zoo.models:Nope", "-o", "X"], "has no 'Nope'"),
    (["dump", "zoo.models:ConvBnRelu", "--input", "input=1x3xfoo", "-o", "X"], "NAME=SHAPE"),
    (["dump", "zoo.models:ConvBnRelu", "--input", "input=1x3:complex9", "-o", "X"], "dtype"),
    (["dump", "zoo.models:ConvBnRelu", "--kwargs", "{bad", "-o", "X"], "--kwargs"),
    (["dump", "zoo.models:ConvBnRelu", "--no-such-flag", "-o", "X"], "unrecognized"),
    (["dump", "zoo.models:ConvBnRelu"], "required"),
    ([], "expected a command"),
])
def test_bad_usage_exits_2_with_one_line(argv, needle):
    r = run(*argv)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert r.stdout == ""


def test_export_default_exporter_records_it_and_fp64_by_default(tmp_dir):
    out, model = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run("dump", "zoo.models:TupleTwice", "-o", out, "--export", model,
            "--output-names", "y,h", "--dynamic", "x:0:batch")
    assert r.returncode == 0, r.stderr
    m = check_manifest(out)
    default = "dynamo" if "dynamo" in inspect.signature(torch.onnx.export).parameters and \
        inspect.signature(torch.onnx.export).parameters["dynamo"].default else "torchscript"
    assert m["export"]["exporter"] == default
    assert f"({default})" in r.stdout
    assert list(m["outputs_fp64"]) == ["y", "h"]
    dims = onnx.load(model).graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch"


def test_export_torchscript_without_fp64(tmp_dir):
    out, model = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run("dump", "zoo.models:TupleTwice", "-o", out, "--export", model,
            "--exporter", "torchscript", "--no-fp64")
    assert r.returncode == 0, r.stderr
    m = check_manifest(out)
    assert m["export"]["exporter"] == "torchscript"
    assert "outputs_fp64" not in m and not os.path.exists(os.path.join(out, "fp64"))


@pytest.mark.skipif(not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")
def test_export_failure_exits_3_with_a_summary_line_then_the_whole_error(tmp_dir):
    out, model = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run("dump", "zoo.models:DataDependent", "-o", out, "--export", model, "--exporter", "dynamo")
    assert r.returncode == 3
    lines = r.stderr.strip().splitlines()
    assert lines[0].startswith("parity.torch: dynamo export failed: "), r.stderr
    assert "data-dependent" in lines[0]
    # Issue 41: the rest of torch's message follows, indented, never cut.
    assert lines[1] == "  the whole error:" and all(line.startswith("    ") for line in lines[2:] if line)
    assert "Could not guard on data-dependent expression" in r.stderr and "\x1b[" not in r.stderr
    # Issue 28: the user's line that raised is the useful part; it survives the cut.
    assert "(raised at models.py:" in lines[0] and "in forward: if y.sum() > 0:" in lines[0], lines[0]
    assert r.stdout == ""
    assert not os.path.exists(os.path.join(out, "manifest.json"))


@pytest.mark.parametrize("argv, needle", [
    (["dump", "zoo.models:ConvBnRelu", "-o", "X", "--exporter", "dynamo"], "need --export"),
    (["dump", "zoo.models:ConvBnRelu", "-o", "X", "--export", "m.onnx", "--exporter", "jit"],
     "invalid choice"),
])
def test_more_bad_usage_exits_2(argv, needle):
    r = run(*argv)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_cli_names_the_same_exporters_as_export():
    from parity.torch import cli, exporter
    assert cli.EXPORTERS == exporter.EXPORTERS



def test_one_line_keeps_the_users_line_when_the_message_is_long():
    from parity.torch.errors import one_line
    inner = RuntimeError("Could not guard on data-dependent expression Eq(u0, 1) " + "x" * 600)
    outer = ValueError("Failed to export the model\n## Exception summary\nlots of advice\n"
                       "The following call raised this error:\n"
                       '  File "/home/u/proj/models.py", line 156, in forward\n'
                       "    if y.sum() > 0:  # a branch\nThe error above occurred")
    outer.__cause__ = inner
    text = one_line(outer)
    assert len(text) <= 400 and "\n" not in text
    assert text.startswith("ValueError: RuntimeError: Could not guard on data-dependent expression")
    assert text.endswith("(raised at models.py:156 in forward: if y.sum() > 0:  # a branch)"), text
