"""A classifier TRAINED for a few seconds on a synthetic, separable dataset
(seeded), so that its top-1 means something (a random-weight classifier's
logits sit so close that top-1 flips on errors far below their spread):
its static int8 copies are judged by what their users see, top-1 agreement
with the float model on held-out images (derived.py measures it).

    images [B, 3, 32, 32] in [0, 1]: oriented stripes, one frequency, angle and
    tint per class (10 classes), random phase per image, under smooth noise.

Also the hand edits of issue 50's "Cast-only edit": the float export with an
int64 -> int64 Cast (dtype preserving) inserted on the shape its Reshape
reads, and the same edit with one conv weight x1.005.
"""

import math

import numpy as np
import onnx
import torch

SIZE = 32
CLASSES = 10
_FREQ = [2.0, 3.0, 4.5, 2.5, 3.5, 5.0, 2.0, 3.0, 4.0, 5.5]          # stripes per image
_ANGLE = [0, 30, 60, 90, 120, 150, 45, 105, 15, 75]                  # degrees
_TINT = np.array([[1.0, 0.6, 0.3], [0.3, 1.0, 0.6], [0.6, 0.3, 1.0], [1.0, 1.0, 0.4], [0.4, 1.0, 1.0],
                  [1.0, 0.4, 1.0], [0.8, 0.8, 0.8], [1.0, 0.5, 0.5], [0.5, 0.5, 1.0], [0.5, 1.0, 0.5]],
                 dtype=np.float32)


def dataset(n, seed):
    """(images [n, 3, SIZE, SIZE] float32 in [0, 1], labels [n] int64), seeded."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, CLASSES, (n,), generator=g)
    phase = torch.rand(n, generator=g) * 2 * math.pi
    yy, xx = torch.meshgrid(torch.linspace(0, 1, SIZE), torch.linspace(0, 1, SIZE), indexing="ij")
    out = torch.empty(n, 3, SIZE, SIZE)
    for i in range(n):
        c = int(labels[i])
        a = math.radians(_ANGLE[c])
        wave = 0.5 + 0.5 * torch.sin(2 * math.pi * _FREQ[c] * (xx * math.cos(a) + yy * math.sin(a)) + phase[i])
        out[i] = wave.unsqueeze(0) * torch.from_numpy(_TINT[c]).view(3, 1, 1)
    noise = torch.rand(n, 3, SIZE // 4, SIZE // 4, generator=g)
    noise = torch.nn.functional.interpolate(noise, size=(SIZE, SIZE), mode="bilinear", align_corners=False)
    return (0.65 * out + 0.35 * noise).clamp(0, 1), labels


class TinyNet(torch.nn.Module):
    """Three Conv+BatchNorm+ReLU stages, global pooling, a Linear; the logits'
    flatten written as users write it, x.reshape(x.shape[0], -1) (an int64
    shape computed in the graph: where the Cast edit goes)."""

    def __init__(self, classes=CLASSES):
        super().__init__()

        def stage(cin, cout):
            return [torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False), torch.nn.BatchNorm2d(cout),
                    torch.nn.ReLU()]

        self.features = torch.nn.Sequential(*stage(3, 16), torch.nn.MaxPool2d(2), *stage(16, 32),
                                            torch.nn.MaxPool2d(2), *stage(32, 64))
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.classifier = torch.nn.Linear(64, classes)

    def forward(self, images):
        x = self.pool(self.features(images))
        return self.classifier(x.reshape(x.shape[0], -1))


def train(steps=250, batch=64, seed=0):
    """The trained TinyNet (eval) and its facts: seconds, held-out accuracy."""
    import time
    started = time.perf_counter()
    torch.manual_seed(seed)
    model = TinyNet()
    x, y = dataset(2048, seed=1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        idx = torch.randint(0, x.shape[0], (batch,), generator=g)
        loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    hx, hy = held_out()
    with torch.no_grad():
        acc = float((model(torch.from_numpy(hx)).argmax(-1).numpy() == hy).mean())
    return model, {"train_seconds": round(time.perf_counter() - started, 2), "train_steps": steps,
                   "final_loss": round(float(loss.detach()), 4), "float_accuracy_held_out": round(acc, 4)}


def held_out(n=256):
    x, y = dataset(n, seed=99)
    return x.numpy(), y.numpy()


def calibration(n=32, scale=1.0):
    """Calibration feeds: training-distribution images (scale < 1: dimmed, the
    mistake of calibrating on differently normalised images)."""
    x, _ = dataset(n, seed=7)
    return [{"images": (x[i:i + 1] * scale).numpy()} for i in range(n)]


def accuracy(path, x, y):
    from .common import run_onnx
    return round(float((run_onnx(path, {"images": x})[0].argmax(-1) == y).mean()), 4)


# --- the Cast-only edit ---------------------------------------------------------

def cast_edit(src, dst, fault=None):
    """src with Cast(to=INT64) inserted on the int64 shape input of its first
    Reshape (a dtype-preserving, value-preserving edit); fault=(k, factor): also
    the weight of the k-th Conv multiplied by factor. Returns what was done."""
    model = onnx.load(str(src))
    g = model.graph
    pos, node = next((i, n) for i, n in enumerate(g.node) if n.op_type == "Reshape")
    shape = node.input[1]
    cast_out = shape + "_int64"
    cast = onnx.helper.make_node("Cast", [shape], [cast_out], name="edit/Cast_shape_int64", to=onnx.TensorProto.INT64)
    node.input[1] = cast_out
    g.node.insert(pos, cast)
    facts = {"cast_on": shape, "reshape": node.name}
    if fault is not None:
        k, factor = fault
        conv = [n for n in g.node if n.op_type == "Conv"][k]
        init = next(t for t in g.initializer if t.name == conv.input[1])
        w = onnx.numpy_helper.to_array(init).astype(np.float32) * np.float32(factor)
        init.CopyFrom(onnx.numpy_helper.from_array(w, init.name))
        facts.update(fault_node=conv.name, fault_weight=init.name, fault_factor=factor)
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))
    return facts
