"""A small detector whose output mixes scales (issue 40), made in the test
run: a conv net whose head concatenates 4 box channels in pixels (a 1x1
conv, plus 1, scaled x300) with 80 sigmoid class scores along axis 1, flattened to
[batch, 84, anchors] as Ultralytics YOLOv8's output0. The score logits
start at -9 (a detector's background prior, YOLOv8's bias_init), so the
scores are ~1e-4 while the boxes are ~1e2: one band for the whole output
is wider than every score. Random weights, BatchNorm with running
statistics, no download.

`factor` multiplies the class branch's three convolutions (the planted
fault: factor 3 moves the scores by a median ~18%)."""

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

CLASSES = 80
SIZE = 128  # input 1x3x128x128 -> 16x16 = 256 anchors


def _cbs(i, o, s):
    return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.SiLU())


class Detector(nn.Module):
    def __init__(self, classes=CLASSES, prior=-9.0):
        super().__init__()
        self.backbone = nn.Sequential(_cbs(3, 16, 2), _cbs(16, 32, 2), _cbs(32, 32, 2))
        self.box = nn.Sequential(_cbs(32, 32, 1), nn.Conv2d(32, 4, 1))
        self.cls = nn.Sequential(_cbs(32, 32, 1), _cbs(32, 32, 1), nn.Conv2d(32, classes, 1))
        nn.init.constant_(self.cls[-1].bias, prior)

    def forward(self, images):
        f = self.backbone(images)
        boxes = (self.box(f) + 1) * 300  # pixels, around 300
        scores = self.cls(f).sigmoid()
        return torch.cat([boxes, scores], 1).flatten(2)


def detector(factor=1.0):
    """The detector with seeded weights and BatchNorm statistics (parity.torch dump's MODULE:FACTORY)."""
    torch.manual_seed(0)
    m = Detector()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2)
    with torch.no_grad():
        for conv in (m.cls[0][0], m.cls[1][0], m.cls[2]):
            conv.weight.mul_(factor)
    return m.eval()


def export(path, factor=1.0, batch=1):
    torch.onnx.export(detector(factor), torch.rand(batch, 3, SIZE, SIZE), str(path), input_names=["images"],
                      output_names=["output0"], opset_version=17, dynamo=False)
    return path


def images(path, n=8, seed=3):
    """n samples in [0, 1] for `parity check --inputs` / `compare`: SAMPLE/images keys."""
    rng = np.random.default_rng(seed)
    np.savez(str(path), **{f"s{i:02d}/images": rng.random((1, 3, SIZE, SIZE), dtype=np.float32) for i in range(n)})
    return path


class _Reader:
    def __init__(self, n=16, seed=1):
        rng = np.random.default_rng(seed)
        self._feeds = iter([{"images": rng.random((1, 3, SIZE, SIZE), dtype=np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self._feeds, None)

    def rewind(self):
        pass


def head_nodes(path):
    """The head after the last convolutions (the x300, the Sigmoid, the Concat, the flatten): what a user
    leaves in float when quantizing a detector."""
    m = onnx.load(str(path))
    return [n.name for n in m.graph.node if n.op_type in ("Mul", "Sigmoid", "Concat", "Reshape", "Flatten")]


def quantize_static(src, dst, per_channel=False, head=False):
    """Static QDQ (uint8 activations, int8 weights). head=False leaves the head in float (a healthy copy);
    head=True quantizes the Concat too: one output scale for pixels and scores."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType
    from onnxruntime.quantization import quantize_static as qs

    class Reader(_Reader, CalibrationDataReader):
        pass

    qs(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
       weight_type=QuantType.QInt8, per_channel=per_channel, nodes_to_exclude=[] if head else head_nodes(src))
    return dst


def quantize_dynamic(src, dst):
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization import quantize_dynamic as qd
    qd(str(src), str(dst), weight_type=QuantType.QInt8)
    return dst


def force_output_scale(src, dst, output="output0", scale=2.498):
    """The DequantizeLinear that writes `output` (and its QuantizeLinear) on one coarse scale: every class score
    quantizes to 0, as quantize_static gave Ultralytics YOLOv8n's output (scale 2.498)."""
    m = onnx.load(str(src))
    producers = {o: n for n in m.graph.node for o in n.output}
    dq = producers[output]
    assert dq.op_type == "DequantizeLinear", dq.op_type
    q = producers[dq.input[0]]
    inits = {i.name: i for i in m.graph.initializer}
    for name in {dq.input[1], q.input[1]}:
        inits[name].CopyFrom(numpy_helper.from_array(np.array(scale, dtype=np.float32), name))
    onnx.save(m, str(dst))
    return dst
