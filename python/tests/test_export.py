"""export(): the ONNX file, the export record, and the dump made with it."""

import numpy as np
import onnx
import pytest
import torch
import torchvision

import parity.torch as ptorch
from zoo import models

from conftest import EXPORTER_PARAMS, check_manifest, load_tensor, run_direct


def _resnet18():
    return torchvision.models.resnet18(weights=None), (torch.randn(1, 3, 64, 64),)


def _mobilenet():
    return torchvision.models.mobilenet_v3_small(weights=None), (torch.randn(1, 3, 64, 64),)


def _own(cls, *a):
    def make():
        model = cls()
        return model, model.make_inputs(0, *a)
    return make


# name -> (factory, export kwargs, slow path)
CASES = {
    "conv_bn_relu": (_own(models.ConvBnRelu, 32),
                     dict(input_names=["input"], output_names=["output"]), False),
    "resnet18": (_resnet18, dict(input_names=["images"], output_names=["logits"],
                                 dynamic_axes={"images": {0: "batch"}, "logits": [0]}), False),
    "mobilenet_v3_small": (_mobilenet, dict(input_names=["images"], output_names=["logits"]), False),
    "tiny_transformer": (_own(models.TinyTransformer),
                         dict(input_names=["tokens"], output_names=["hidden"],
                              dynamic_axes={"tokens": {0: "batch", 1: "seq"}}), True),
    "tuple_twice": (_own(models.TupleTwice), dict(input_names=["x"], output_names=["y", "h"]), False),
    "yolo_like": (_own(models.YoloLike), dict(
        input_names=["images"], output_names=["p3", "p4", "p5"],
        dynamic_axes={"images": {0: "batch", 2: "height", 3: "width"}}), False),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def exported(request, tmp_path_factory):
    factory, kwargs, slow = CASES[request.param]
    torch.manual_seed(0)
    model, args = factory()
    root = tmp_path_factory.mktemp(request.param)
    path, dump_dir = str(root / "model.onnx"), str(root / "dump")
    record = ptorch.export(model, args, path, dump_dir=dump_dir, opset_version=17,
                                 exporter="torchscript", **kwargs)
    return dict(case=request.param, model=model, args=args, path=path, dump_dir=dump_dir, record=record,
                kwargs=kwargs, slow=slow)


def test_onnx_file_passes_checker(exported):
    proto = onnx.load(exported["path"])
    onnx.checker.check_model(proto)
    assert [o.name for o in proto.graph.output] == exported["kwargs"]["output_names"]


def test_record_matches_request(exported):
    rec, kw = exported["record"], exported["kwargs"]
    assert rec["exporter"] == "torchscript"
    assert rec["opset"] == 17 and rec["opset_requested"]
    assert rec["input_names"] == kw["input_names"]
    assert rec["output_names"] == kw["output_names"]
    expected_axes = {}
    for name, axes in kw.get("dynamic_axes", {}).items():
        expected_axes[name] = ({str(a): label for a, label in axes.items()} if isinstance(axes, dict)
                               else {str(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)})
    assert rec["dynamic_axes"] == expected_axes
    # each recorded label is the dim_param in the file
    proto = onnx.load(exported["path"])
    values = {v.name: v for v in list(proto.graph.input) + list(proto.graph.output)}
    for name, axes in rec["dynamic_axes"].items():
        dims = values[name].type.tensor_type.shape.dim
        for axis, label in axes.items():
            assert dims[int(axis)].dim_param == label
    assert check_manifest(exported["dump_dir"])["export"] == rec


def test_dump_outputs_bitwise_equal_direct_run(exported):
    m = check_manifest(exported["dump_dir"])
    kw = exported["kwargs"]
    assert list(m["inputs"]) == kw["input_names"]
    assert list(m["outputs"]) == kw["output_names"]
    direct = run_direct(exported["model"], exported["args"], exported["slow"])
    direct = direct if isinstance(direct, tuple) else (direct,)
    for name, tensor in zip(kw["output_names"], direct):
        got = load_tensor(exported["dump_dir"], m["outputs"][name])
        assert got.tobytes() == tensor.detach().numpy().tobytes(), name
    for name, tensor in zip(kw["input_names"], exported["args"]):
        assert np.array_equal(load_tensor(exported["dump_dir"], m["inputs"][name]), tensor.numpy())


def test_layers_numbered_and_in_execution_order(exported):
    layers = check_manifest(exported["dump_dir"])["layers"]
    calls = {}
    for i, layer in enumerate(layers):
        key = layer["module"]
        if layer["output_index"] in (None, 0):
            calls[key] = calls.get(key, -1) + 1
        assert layer["call"] == calls[key], layer
        assert layer["order"] >= (layers[i - 1]["order"] if i else 0)
    modules = [(l["module"], l["call"]) for l in layers]
    if exported["case"] == "resnet18":
        assert ("layer1.0.relu", 1) in modules  # BasicBlock calls its ReLU twice
        assert modules.index(("layer1.0.conv1", 0)) < modules.index(("layer1.0.bn1", 0)) \
            < modules.index(("layer1.0.relu", 0)) < modules.index(("layer1.0", 0))
        assert modules[-1] == ("fc", 0)
    if exported["case"] == "tuple_twice":
        assert ("fc", 1) in modules and ("act", 1) in modules


@pytest.mark.parametrize("exporter", EXPORTER_PARAMS)
def test_default_opset_and_list_axes_recorded(tmp_dir, exporter):
    model = models.ConvBnRelu()
    rec = ptorch.export(model, model.make_inputs(0, 32), tmp_dir + "/m.onnx", exporter=exporter,
                              input_names=["input"], dynamic_axes={"input": [0, 2]})
    proto = onnx.load(tmp_dir + "/m.onnx")
    assert rec["opset"] == next(i.version for i in proto.opset_import if i.domain in ("", "ai.onnx"))
    assert rec["opset_requested"] is False
    assert rec["dynamic_axes"] == {"input": {"0": "input_dynamic_axes_1", "2": "input_dynamic_axes_2"}}
    assert rec["onnx_output_names"] == [proto.graph.output[0].name]
    assert rec["exporter"] == exporter
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    assert [dims[a].dim_param for a in (0, 2)] == ["input_dynamic_axes_1", "input_dynamic_axes_2"]
    assert rec["onnx_dynamic_dims"]["input"] == rec["dynamic_axes"]["input"]


@pytest.mark.parametrize("exporter", EXPORTER_PARAMS)
def test_unnamed_outputs_dumped_under_their_onnx_names(tmp_dir, exporter):
    model = models.ConvBnRelu()
    ptorch.export(model, model.make_inputs(0, 32), tmp_dir + "/m.onnx", dump_dir=tmp_dir + "/d",
                        exporter=exporter)
    proto = onnx.load(tmp_dir + "/m.onnx")
    m = check_manifest(tmp_dir + "/d")
    assert list(m["outputs"]) == [o.name for o in proto.graph.output]
    assert list(m["inputs"]) == [i.name for i in proto.graph.input]


def test_record_names_dynamo_when_asked():
    from parity.torch.exporter import export_record
    rec = export_record({"dynamo": True, "opset_version": 18, "input_names": ["x"]})
    assert rec["exporter"] == "dynamo" and rec["opset"] == 18 and rec["input_names"] == ["x"]
    assert export_record({"dynamo": False})["exporter"] == "torchscript"
