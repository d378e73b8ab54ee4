"""Float, int8 QDQ and float16 models made in the test run (issue 25):
torchvision CNNs and a small BERT with random weights, quantized with
onnxruntime.quantization on generated calibration data, converted with
onnxruntime.transformers.float16. No download, no hub."""

import numpy as np
import onnx
import torch
from onnx import numpy_helper


def export_cnn(name, path, size=64):
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    torch.onnx.export(model, torch.randn(1, 3, size, size), str(path), input_names=["input"],
                      output_names=["logits"], opset_version=17, dynamo=False)
    return path


class _Reader:
    """Calibration data: seeded standard-normal samples for each input."""

    def __init__(self, feeds):
        self._feeds = iter(feeds)

    def get_next(self):
        return next(self._feeds, None)

    def rewind(self):  # not needed: quantize_static reads once
        pass


def calibration(inputs, n=8, seed=1):
    rng = np.random.default_rng(seed)
    return [{k: (rng.standard_normal(shape).astype(dtype) if dtype == np.float32 else
                 rng.integers(0, 100, size=shape).astype(dtype)) for k, (shape, dtype) in inputs.items()}
            for _ in range(n)]


def quantize_qdq(src, dst, inputs, per_channel=False):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(_Reader, CalibrationDataReader):
        pass

    quantize_static(str(src), str(dst), Reader(calibration(inputs)), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=per_channel)
    return dst


def quantize_dynamic_qdq(src, dst):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8)
    return dst


def to_fp16(src, dst, keep_io_types=True, node_block_list=None):
    from onnxruntime.transformers.float16 import convert_float_to_float16
    m = convert_float_to_float16(onnx.load(str(src)), keep_io_types=keep_io_types, node_block_list=node_block_list)
    onnx.save(m, str(dst))
    return dst


def coarsen_weight_scale(src, dst, conv_index, factor=4, op_type="Conv"):
    """One Conv's (or Gemm's) weight requantized on a grid `factor` times
    coarser (the planted quantization fault): W_q <- round(W_q / factor),
    scale *= factor. Returns the node's name."""
    m = onnx.load(str(src))
    inits = {i.name: i for i in m.graph.initializer}
    producers = {o: n for n in m.graph.node for o in n.output}
    conv = [n for n in m.graph.node if n.op_type == op_type][conv_index]
    dq = producers[conv.input[1]]
    assert dq.op_type == "DequantizeLinear"
    q, scale = inits[dq.input[0]], inits[dq.input[1]]
    q_values = numpy_helper.to_array(q)
    q.CopyFrom(numpy_helper.from_array(np.round(q_values / factor).astype(q_values.dtype), q.name))
    scale.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(scale) * factor).astype(np.float32), scale.name))
    onnx.save(m, str(dst))
    return conv.name


def shrink_activation_scale(src, dst, conv_index, factor=8):
    """The output quantizer of one Conv (after its Relu, where the quantizer
    reads that) given a scale `factor` times finer: its float values then
    reach beyond what the grid represents, and it clips (the planted
    calibration fault). Returns the names of the Conv and of the node whose
    output the quantizer reads."""
    m = onnx.load(str(src))
    inits = {i.name: i for i in m.graph.initializer}
    consumers = {}
    for n in m.graph.node:
        for t in n.input:
            consumers.setdefault(t, []).append(n)
    conv = [n for n in m.graph.node if n.op_type == "Conv"][conv_index]
    producer, tensor = conv, conv.output[0]
    readers = consumers.get(tensor, [])
    if len(readers) == 1 and readers[0].op_type == "Relu":
        producer, tensor = readers[0], readers[0].output[0]
    q = next(n for n in consumers[tensor] if n.op_type == "QuantizeLinear")
    scale = inits[q.input[1]]
    scale.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(scale) / factor).astype(np.float32), scale.name))
    onnx.save(m, str(dst))
    return conv.name, producer.name


def shrink_asymmetric_output_scale(src, dst, factor=2):
    """The first Conv whose output quantizer has a nonzero zero point (a
    block's second Conv, read by its residual Add) given a scale `factor`
    times finer. Returns the Conv's name and that zero point."""
    m = onnx.load(str(src))
    inits = {i.name: i for i in m.graph.initializer}
    consumers = {}
    for n in m.graph.node:
        for t in n.input:
            consumers.setdefault(t, []).append(n)
    for conv in (n for n in m.graph.node if n.op_type == "Conv"):
        q = next((n for n in consumers.get(conv.output[0], []) if n.op_type == "QuantizeLinear"), None)
        if q is None or len(q.input) < 3:
            continue
        zero_point = int(numpy_helper.to_array(inits[q.input[2]]))
        if zero_point == 0:
            continue
        scale = inits[q.input[1]]
        scale.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(scale) / factor).astype(np.float32),
                                               scale.name))
        onnx.save(m, str(dst))
        return conv.name, zero_point
    raise AssertionError("no Conv with an asymmetric output quantizer")


def shift_weight_codes(src, dst, conv_index, delta=3, count=64):
    """One Conv's int8 weight codes moved by `delta` in its first `count`
    elements (scales untouched): a model that differs from `src` by several
    quantization steps at that Conv. Returns the Conv's node name."""
    m = onnx.load(str(src))
    inits = {i.name: i for i in m.graph.initializer}
    producers = {o: n for n in m.graph.node for o in n.output}
    conv = [n for n in m.graph.node if n.op_type == "Conv"][conv_index]
    q = inits[producers[conv.input[1]].input[0]]
    codes = numpy_helper.to_array(q).copy()
    flat = codes.reshape(-1)
    flat[:count] = np.clip(flat[:count].astype(np.int32) + delta, -127, 127).astype(codes.dtype)
    q.CopyFrom(numpy_helper.from_array(codes, q.name))
    onnx.save(m, str(dst))
    return conv.name


def classifier_samples(path, n=64, shape=(1, 3, 64, 64), seed=2):
    """n samples for `parity check --inputs`: SAMPLE/INPUT keys."""
    rng = np.random.default_rng(seed)
    np.savez(str(path), **{f"s{i:03d}/input": rng.standard_normal(shape).astype(np.float32) for i in range(n)})
    return path


def export_bert(path, seq=16):
    """A 2-layer BERT (hidden 64, 2 heads, random weights) exported with
    torch.onnx.export: inputs input_ids / attention_mask (int64 [1, seq]),
    output last_hidden_state."""
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    config = BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=64)
    model = BertModel(config).eval()

    class Wrapper(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.randint(0, 100, (1, seq))
    mask = torch.ones(1, seq, dtype=torch.int64)
    torch.onnx.export(Wrapper(model), (ids, mask), str(path), input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False)
    return path


def export_conv_chain(path, convs=4, size=32):
    """convs x (Conv 3x3 + Relu), 16 channels: at ORT_ENABLE_ALL its QDQ model
    becomes one NhwcTransformer chain, Transpose + QLinearConv x convs + Transpose."""
    torch.manual_seed(0)
    layers = []
    for i in range(convs):
        layers += [torch.nn.Conv2d(3 if i == 0 else 16, 16, 3, padding=1), torch.nn.ReLU()]
    torch.onnx.export(torch.nn.Sequential(*layers).eval(), torch.randn(1, 3, size, size), str(path),
                      input_names=["input"], output_names=["out"], opset_version=17, dynamo=False)
    return path
