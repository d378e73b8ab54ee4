"""Quantized (int8 QDQ) and float16 models against their float model, layer
by layer (issue 25, docs/quantized.md): `parity locate FLOAT --target-model
DERIVED` reports each matched layer's SQNR and error in quantization steps,
its local and inherited loss, and names the layer that loses the most on its
own (`worst_local`).

Needs torchvision, onnxruntime's quantization tools and the built parity
binary (PARITY_BINARY, else build/parity); skipped otherwise."""

import json
import os
import subprocess

import pytest

torchvision = pytest.importorskip("torchvision")
pytest.importorskip("onnxruntime.quantization")
import quant_models  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PARITY = os.environ.get("PARITY_BINARY", os.path.join(REPO, "build", "parity"))
pytestmark = pytest.mark.skipif(not os.access(PARITY, os.X_OK), reason=f"no parity binary at {PARITY}")

CNN_INPUT = {"input": ((1, 3, 64, 64), "float32")}


def locate(float_model, derived, *extra):
    """`parity locate FLOAT --target-model DERIVED --json`: (exit code, stdout, parity.locate/1)."""
    out = f"{derived}.{len(extra)}.locate.json"
    r = subprocess.run([PARITY, "locate", str(float_model), "--target-model", str(derived), "--no-ablation",
                        "--json", out, *extra], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    with open(out, encoding="utf-8") as f:
        return r.returncode, r.stdout, json.load(f)


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    import numpy as np
    d = tmp_path_factory.mktemp("resnet18")
    f = quant_models.export_cnn("resnet18", d / "float.onnx")
    inputs = {"input": ((1, 3, 64, 64), np.float32)}
    q = quant_models.quantize_qdq(f, d / "qdq.onnx", inputs)
    planted = quant_models.coarsen_weight_scale(q, d / "coarse.onnx", conv_index=7)
    return {"float": f, "qdq": q, "coarse": d / "coarse.onnx", "planted": planted}


def test_healthy_static_qdq_resnet_matches_90_percent_of_conv_layers(resnet):
    _, text, report = locate(resnet["float"], resnet["qdq"])
    quant = report["quant"]
    assert quant["kind"] == "qdq"
    assert quant["compute_layers"] == 21  # 20 Conv + the Gemm
    assert quant["compute_matched"] >= 0.9 * quant["compute_layers"]
    convs = [layer for layer in quant["layers"] if layer["op_type"] == "Conv"]
    assert len(convs) == 20
    for layer in convs:
        assert layer["grid"] == "uint8" and layer["step"] > 0, layer
        assert 5 < layer["sqnr_db"] < 60, layer  # lossy but not broken
        assert layer["local"]["sqnr_db"] >= 10, layer
        assert layer["weight"]["loss"]["max_steps"] <= 0.5 + 1e-6, layer  # round to nearest: half a step at most
    # A Conv whose Relu the quantizer folded into its QuantizeLinear is compared on the Relu's output.
    stem = next(layer for layer in convs if layer["node"] == "/conv1/Conv")
    assert stem["tensor"] == "/relu/Relu_output_0" and stem["folded"] == ["/relu/Relu"]
    assert stem["module"] == "conv1"
    assert report["quant"]["worst_local"] is not None
    assert "precision per layer (qdq" in text and "worst local loss" in text


def test_planted_coarse_weight_scale_is_the_top_local_loss(resnet):
    _, text, report = locate(resnet["float"], resnet["coarse"])
    quant = report["quant"]
    worst = quant["worst_local"]
    assert worst["node"] == resnet["planted"], (worst, text)
    # Its weight is 4x coarser: about 12 dB below the healthy model's same weight.
    _, _, healthy = locate(resnet["float"], resnet["qdq"])
    before = next(layer for layer in healthy["quant"]["layers"] if layer["node"] == resnet["planted"])
    assert worst["weight"]["loss"]["sqnr_db"] < before["weight"]["loss"]["sqnr_db"] - 9
    assert worst["local"]["sqnr_db"] < before["local"]["sqnr_db"] - 3


@pytest.fixture(scope="module")
def half(tmp_path_factory):
    """resnet18 converted to float16 with and without keep_io_types, and a
    copy whose stem convolution's weights are scaled so its activations pass
    65504."""
    import onnx
    from onnx import numpy_helper
    d = tmp_path_factory.mktemp("resnet18_fp16")
    f = quant_models.export_cnn("resnet18", d / "float.onnx")
    m = onnx.load(str(f))
    conv = [n for n in m.graph.node if n.op_type == "Conv"][3]
    w = next(i for i in m.graph.initializer if i.name == conv.input[1])
    w.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(w) * 1e5, w.name))
    onnx.save(m, str(d / "hot.onnx"))
    return {"float": f, "keep_io": quant_models.to_fp16(f, d / "fp16_io.onnx", keep_io_types=True),
            "all_half": quant_models.to_fp16(f, d / "fp16.onnx", keep_io_types=False),
            "hot": d / "hot.onnx", "hot_half": quant_models.to_fp16(d / "hot.onnx", d / "hot16.onnx"),
            "hot_node": conv.name}


@pytest.mark.parametrize("variant", ["keep_io", "all_half"])
def test_float16_layers_are_matched_and_measured_in_float16_steps(half, variant):
    _, _, report = locate(half["float"], half[variant])
    quant = report["quant"]
    assert quant["kind"] == "float16"
    assert quant["compute_matched"] == quant["compute_layers"] == 21
    convs = [layer for layer in quant["layers"] if layer["op_type"] == "Conv"]
    for layer in convs:
        assert layer["grid"] == "float16" and layer["step"] > 0, layer
        assert layer["sqnr_db"] > 40, layer  # float16 loses far less than int8
        assert layer["weight"]["loss"]["max_steps"] <= 0.5 + 1e-6, layer  # one rounding of each weight
    assert quant["overflow"] is None


def test_float16_overflow_names_the_first_layer_past_65504(half):
    _, text, report = locate(half["hot"], half["hot_half"])
    overflow = report["quant"]["overflow"]
    assert overflow is not None, text
    assert overflow["node"] == half["hot_node"], overflow
    assert overflow["float_absmax"] > 65504
    assert "keep '%s' in float" % half["hot_node"] in text
