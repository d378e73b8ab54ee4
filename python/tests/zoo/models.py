"""Small test and demo models, each with make_inputs(seed) -> tuple of tensors.

ConvBnRelu      the seed's Conv2d(3,16,3,p=1) + BatchNorm2d + ReLU, 1x3x224x224
TupleTwice      returns a tuple; one submodule is called twice
YoloLike        tiny 3-head detector (strides 8/16/32); batch, H, W dynamic
                (H and W multiples of 32)
TinyTransformer nn.TransformerEncoder, 2 layers, d_model 32, 4 heads, batch_first
DataDependent   branches on a tensor's value: torch.export (the dynamo exporter)
                refuses it; the TorchScript exporter traces one branch
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _randn(seed, *shape):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()

    def forward(self, input):
        return self.relu(self.bn(self.conv(input)))

    @staticmethod
    def make_inputs(seed=0, size=224):
        return (_randn(seed, 1, 3, size, size),)


class Halves(nn.Module):
    """Returns a tuple: the two halves of the last dimension."""

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return a, b


class TupleTwice(nn.Module):
    """Returns a tuple of two tensors; `fc` and `act` run twice each, and
    `halves` returns a tuple of its own."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()
        self.halves = Halves()
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        h = self.act(self.fc(x))
        y = self.act(self.fc(h))
        left, right = self.halves(y)
        return self.head(left) + right, h

    @staticmethod
    def make_inputs(seed=0):
        return (_randn(seed, 2, 8),)


class ConvBnSiLU(nn.Sequential):
    def __init__(self, cin, cout, k=3, s=1):
        super().__init__(nn.Conv2d(cin, cout, k, s, k // 2, bias=False),
                         nn.BatchNorm2d(cout), nn.SiLU())


class YoloLike(nn.Module):
    """Backbone to strides 8/16/32, a top-down neck (nn.Upsample and
    F.interpolate, nearest, then concat), and one 1x1 head per stride giving
    (N, anchors*(5+classes), H/s, W/s)."""

    def __init__(self, classes=3, anchors=2, width=8):
        super().__init__()
        w = width
        self.stem = ConvBnSiLU(3, w, 3, 2)                                   # /2
        self.stage1 = ConvBnSiLU(w, 2 * w, 3, 2)                             # /4
        self.stage2 = nn.Sequential(ConvBnSiLU(2 * w, 2 * w, 3, 2),
                                    ConvBnSiLU(2 * w, 2 * w, 1))             # /8
        self.stage3 = ConvBnSiLU(2 * w, 4 * w, 3, 2)                         # /16
        self.stage4 = ConvBnSiLU(4 * w, 4 * w, 3, 2)                         # /32
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse16 = ConvBnSiLU(8 * w, 4 * w, 1)
        self.fuse8 = ConvBnSiLU(6 * w, 2 * w, 1)
        out = anchors * (5 + classes)
        self.head8 = nn.Conv2d(2 * w, out, 1)
        self.head16 = nn.Conv2d(4 * w, out, 1)
        self.head32 = nn.Conv2d(4 * w, out, 1)

    def forward(self, images):
        p3 = self.stage2(self.stage1(self.stem(images)))
        p4 = self.stage3(p3)
        p5 = self.stage4(p4)
        n4 = self.fuse16(torch.cat([self.up(p5), p4], 1))
        n3 = self.fuse8(torch.cat([F.interpolate(n4, scale_factor=2.0, mode="nearest"), p3], 1))
        return self.head8(n3), self.head16(n4), self.head32(p5)

    @staticmethod
    def make_inputs(seed=0, batch=1, height=64, width=64):
        return (_randn(seed, batch, 3, height, width),)


class GridDecoder(nn.Module):
    """A tiny detector head that decodes box centres to fractions of the image
    width. baked=True writes the width as `float(images.shape[3])`: the
    TorchScript exporter turns it into the traced constant (with a
    TracerWarning), so the export is right at the traced width only;
    baked=False divides by the shape as a tensor op, which stays dynamic."""

    def __init__(self, baked=True):
        super().__init__()
        self.baked = baked
        self.body = ConvBnSiLU(3, 8, 3, 2)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, images):
        boxes = torch.sigmoid(self.head(self.body(images))) * 2.0 + 0.5
        if self.baked:
            width = float(images.shape[3])
        else:
            width = images.shape[3] * torch.ones((), dtype=images.dtype)
        return boxes * (2.0 * images.shape[2]) / width

    @staticmethod
    def make_inputs(seed=0, batch=1, height=32, width=64):
        return (_randn(seed, batch, 3, height, width),)


class TinyTransformer(nn.Module):
    def __init__(self, d_model=32, nhead=4, layers=2, ff=64):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, ff, dropout=0.1, batch_first=True)
        kwargs = {"enable_nested_tensor": False} if _has_nested_flag() else {}
        self.encoder = nn.TransformerEncoder(layer, layers, **kwargs)

    def forward(self, tokens):
        return self.encoder(tokens)

    @staticmethod
    def make_inputs(seed=0, batch=2, seq=5, d_model=32):
        return (_randn(seed, batch, seq, d_model),)


class DataDependent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:  # a Python branch on a value: no graph can hold it
            return y * 2
        return y - 1

    @staticmethod
    def make_inputs(seed=0):
        return (_randn(seed, 2, 4),)


def _has_nested_flag():
    import inspect
    return "enable_nested_tensor" in inspect.signature(nn.TransformerEncoder.__init__).parameters
