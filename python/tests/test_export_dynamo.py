"""export() with the dynamo exporter (torch.export): dynamic axes translated to
dynamic_shapes, eval mode, keyword inputs, one-line errors, exporter choice."""

import os

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn

ort = pytest.importorskip("onnxruntime")

import parity.torch as ptorch
from zoo import models
from parity.torch.errors import ExportError, one_line
from parity.torch.exporter import resolve_exporter

from conftest import HAS_DYNAMO, check_manifest, load_tensor

pytestmark = pytest.mark.skipif(not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")


def _session(path):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def test_dynamic_axes_become_named_dynamic_shapes(tmp_dir):
    """ONNX names differ from the forward's argument name ("input"): the
    request is keyed by ONNX name, dynamic_shapes by argument name."""
    model = models.ConvBnRelu()
    path = tmp_dir + "/m.onnx"
    rec = ptorch.export(model, model.make_inputs(0, 32), path, exporter="dynamo",
                              input_names=["images"], output_names=["features"],
                              dynamic_axes={"images": {0: "batch", 2: "height", 3: "width"},
                                            "features": {0: "batch"}})
    assert rec["exporter"] == "dynamo"
    assert rec["dynamic_shapes"] == {"input": {"0": "batch", "2": "height", "3": "width"}}
    assert rec["dynamic_axes"]["features"] == {"0": "batch"}  # what was asked, outputs included
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["batch", 3, "height", "width"]
    x = torch.randn(2, 3, 40, 24)
    with torch.no_grad():
        expected = model.eval()(x).numpy()
    got = _session(path).run(None, {"images": x.numpy()})[0]
    assert np.allclose(got, expected, atol=1e-5)


def test_unknown_dynamic_axis_name_is_refused(tmp_dir):
    model = models.ConvBnRelu()
    with pytest.raises(ValueError, match="'imgs' is neither an input nor an output"):
        ptorch.export(model, model.make_inputs(0, 32), tmp_dir + "/m.onnx", exporter="dynamo",
                            input_names=["images"], dynamic_axes={"imgs": {0: "batch"}})


def test_exports_in_eval_mode_and_restores_training_flags(tmp_dir):
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5)).train()
    with torch.no_grad():
        model[1].running_mean.fill_(0.3)
    x = torch.randn(3, 4)
    path = tmp_dir + "/m.onnx"
    rec = ptorch.export(model, (x,), path, dump_dir=tmp_dir + "/d", exporter="dynamo",
                              input_names=["x"], output_names=["y"])
    assert all(m.training for m in model.modules())
    assert rec["training"] is False
    got = _session(path).run(None, {"x": x.numpy()})[0]
    dumped = load_tensor(tmp_dir + "/d", check_manifest(tmp_dir + "/d")["outputs"]["y"])
    assert np.allclose(got, dumped, atol=1e-6)


def test_keyword_inputs(tmp_dir):
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, scale=None):
            return self.fc(x) * scale

    x, s = torch.randn(2, 4), torch.full((1,), 3.0)
    path = tmp_dir + "/m.onnx"
    rec = ptorch.export(Scaled(), (x, {"scale": s}), path, dump_dir=tmp_dir + "/d",
                              exporter="dynamo", dynamic_axes={"x": {0: "batch"}})
    assert rec["onnx_input_names"] == ["x", "scale"]
    m = check_manifest(tmp_dir + "/d")
    assert list(m["inputs"]) == ["x", "scale"]
    got = _session(path).run(None, {"x": x.numpy(), "scale": s.numpy()})[0]
    assert np.allclose(got, load_tensor(tmp_dir + "/d", m["outputs"][rec["onnx_output_names"][0]]), atol=1e-6)


def test_failure_is_one_line_with_the_root_cause(tmp_dir):
    model = models.DataDependent()
    with pytest.raises(ExportError) as info:
        ptorch.export(model, model.make_inputs(0), tmp_dir + "/m.onnx", dump_dir=tmp_dir + "/d",
                            exporter="dynamo")
    msg = str(info.value)
    assert "\n" not in msg and len(msg) <= 400
    assert msg.startswith("dynamo export failed: ") and "data-dependent" in msg, msg
    assert info.value.__cause__ is not None
    assert not os.path.exists(tmp_dir + "/d/manifest.json")


def test_one_line_walks_the_cause_chain():
    try:
        try:
            raise ValueError("inner\nsecond line")
        except ValueError as e:
            raise RuntimeError("# Heading\n\nouter text") from e
    except RuntimeError as e:
        assert one_line(e) == "RuntimeError: ValueError: inner"
    assert one_line(ValueError("x" * 1000)).endswith("...")


def test_exporter_choice():
    assert resolve_exporter("torchscript", {}) == "torchscript"
    assert resolve_exporter(None, {"dynamo": False}) == "torchscript"
    assert resolve_exporter(None, {}) == ("dynamo" if torch.__version__ >= "2.9" else "torchscript")
    with pytest.raises(ValueError, match="contradicts"):
        resolve_exporter("dynamo", {"dynamo": False})
    with pytest.raises(ValueError, match="expected one of"):
        resolve_exporter("onnxscript", {})


def test_dynamic_shapes_refused_for_torchscript(tmp_dir):
    model = models.ConvBnRelu()
    with pytest.raises(ValueError, match="dynamic_shapes needs the dynamo exporter"):
        ptorch.export(model, model.make_inputs(0, 32), tmp_dir + "/m.onnx", exporter="torchscript",
                            dynamic_shapes={"input": {0: "batch"}})
