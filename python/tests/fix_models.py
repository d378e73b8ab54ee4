"""Faulty deployed forms for `parity fix` (docs/fix.md), built from seeded
configs with quant_models' builders: an int8 copy whose one output quantizer
clips, a float16 copy with a chain whose values pass 65504, and a
decomposed LayerNorm that ORT's LayerNormFusion computes differently on
inputs far from zero."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import quant_models

CNN_INPUT = {"input": ((1, 3, 64, 64), np.float32)}


def clipped_int8(d, conv_index=13, factor=16):
    """resnet18 (random weights), its static QDQ copy calibrated on seeded
    normal samples (calib.npz, the same 8 samples), and that copy with the
    output quantizer of Conv `conv_index` given a scale `factor` times finer
    (quant_models.shrink_activation_scale): it clips."""
    f = quant_models.export_cnn("resnet18", d / "float.onnx")
    q = quant_models.quantize_qdq(f, d / "qdq.onnx", CNN_INPUT)
    conv, producer = quant_models.shrink_activation_scale(q, d / "clipped.onnx", conv_index=conv_index, factor=factor)
    feeds = quant_models.calibration(CNN_INPUT)
    np.savez(str(d / "calib.npz"), **{f"c{i}/input": s["input"] for i, s in enumerate(feeds)})
    return {"float": f, "qdq": q, "clipped": d / "clipped.onnx", "conv": conv, "producer": producer,
            "calibration": d / "calib.npz"}


class _HotChainNet(torch.nn.Module):
    """conv (weights and bias x gain) -> relu -> conv (weights / gain) -> relu
    -> pool -> linear: the float model's values are ordinary at both ends of
    the chain, but inside it they pass float16's 65504 and the second conv's
    weights fall below float16's smallest normal."""

    def __init__(self, gain):
        super().__init__()
        self.hot = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.cool = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.body = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.head = torch.nn.Linear(16, 10)
        with torch.no_grad():
            self.hot.weight.mul_(gain)
            self.hot.bias.mul_(gain)
            self.cool.weight.div_(gain)

    def forward(self, x):
        x = torch.relu(self.cool(torch.relu(self.hot(x))))
        x = torch.relu(self.body(x))
        return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


def topological(path):
    """onnxruntime.transformers' float16 converter with keep_io_types puts the
    input's Cast after its readers: ORT runs that, the ONNX checker refuses
    it. Sorted in place (OnnxModel.topological_sort)."""
    from onnxruntime.transformers.onnx_model import OnnxModel
    m = OnnxModel(onnx.load(str(path)))
    m.topological_sort()
    onnx.save(m.model, str(path))
    return path


def overflowing_fp16(d, gain=1e5):
    """The hot-chain CNN (float, seeded) and its float16 copy
    (quant_models.to_fp16, keep_io_types, sorted)."""
    torch.manual_seed(0)
    f = d / "chain.onnx"
    torch.onnx.export(_HotChainNet(gain).eval(), torch.randn(1, 3, 32, 32), str(f), input_names=["input"],
                      output_names=["logits"], opset_version=17, dynamo=False)
    return {"float": f, "fp16": topological(quant_models.to_fp16(f, d / "chain_fp16.onnx"))}


def decomposed_layernorm(path, d=64):
    """LayerNorm written out (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div,
    Mul, Add) and a MatMul, opset 18: at `all` ORT's LayerNormFusion makes it
    one LayerNormalization kernel, which on rows far from zero (mean 100, std
    0.01) differs from the unfused graph by ~1e-3."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "gamma"),
             numpy_helper.from_array(rng.standard_normal(d).astype(np.float32), "beta"),
             numpy_helper.from_array((rng.standard_normal((d, d)) * 0.1).astype(np.float32), "W")]
    step = [("ReduceMean", ["x", "axes"], "mu", "ln/mean"), ("Sub", ["x", "mu"], "xc", "ln/sub"),
            ("Pow", ["xc", "two"], "sq", "ln/pow"), ("ReduceMean", ["sq", "axes"], "var", "ln/var"),
            ("Add", ["var", "eps"], "ve", "ln/add_eps"), ("Sqrt", ["ve"], "sd", "ln/sqrt"),
            ("Div", ["xc", "sd"], "xn", "ln/div"), ("Mul", ["xn", "gamma"], "xg", "ln/mul"),
            ("Add", ["xg", "beta"], "ln_out", "ln/add"), ("MatMul", ["ln_out", "W"], "y", "proj/MatMul")]
    nodes = [helper.make_node(op, ins, [out], name=name) for op, ins, out, name in step]
    graph = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, d])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def offset_rows(path, mean, std=0.01, d=64, seed=1):
    """One sample for decomposed_layernorm: rows around `mean`."""
    x = (np.random.default_rng(seed).standard_normal((1, 8, d)) * std + mean).astype(np.float32)
    np.savez(str(path), x=x)
    return path
