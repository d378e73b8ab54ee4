"""Models for the alignment of real exporters' layouts (test_align_wrapper.py):
a tiny detector laid out as Ultralytics' YOLOv8 is, and a module that keeps
state from its first call.

Detector   Sequential `model` of Conv (conv+bn+SiLU), C2f with a ModuleList of
           residual Bottlenecks, and a Detect head that concatenates boxes in
           pixels with class scores and returns (y, feats) as YOLO's does in
           eval; a Pair returns a tuple whose second element its caller never
           uses (the exports drop it). forward loops over `model` as
           DetectionModel does (the Sequential itself is never called).
Wrapper    `class W(nn.Module): def __init__(s, m): s.model = m`: module paths
           read `model.model.4...` in a dump of W(Detector) against
           `model.4...` in the export of the Detector.
KeepsState computes an offset on its first call and keeps it (as YOLO's Detect
           keeps its anchors): a module an export traced holds a tensor
           subclass there afterwards.
"""

import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cv1 = Conv(c, c, 3)
        self.cv2 = Conv(c, c, 3)

    def forward(self, x):
        return x + self.cv2(self.cv1(x))


class C2f(nn.Module):
    def __init__(self, c1, c2, n=2):
        super().__init__()
        self.c = c2 // 2
        self.cv1 = Conv(c1, 2 * self.c, 1)
        self.cv2 = Conv((2 + n) * self.c, c2, 1)
        self.m = nn.ModuleList(Bottleneck(self.c) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class Pair(nn.Module):
    """Returns (main, aux) of one shape; its caller uses main only."""

    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x):
        y = self.conv(x)
        return y, y * 0.5 + 1.0


class Detect(nn.Module):
    def __init__(self, c, classes=3):
        super().__init__()
        self.pair = Pair(c)
        self.box = nn.Sequential(Conv(c, c, 3), nn.Conv2d(c, 4, 1))
        self.cls = nn.Sequential(Conv(c, c, 3), nn.Conv2d(c, classes, 1))

    def forward(self, x):
        x, _ = self.pair(x)
        feats = torch.cat([self.box(x), self.cls(x)], 1)
        flat = feats.flatten(2)
        y = torch.cat([flat[:, :4] * 32.0, flat[:, 4:].sigmoid()], 1)
        return y, feats


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(Conv(3, 8, 3, 2), Conv(8, 16, 3, 2), C2f(16, 16), Conv(16, 16, 3, 2),
                                   C2f(16, 16), Detect(16))

    def forward(self, x):
        for m in self.model:
            x = m(x)
        return x

    @staticmethod
    def make_inputs(seed=0):
        return (torch.rand(1, 3, 64, 64, generator=torch.Generator().manual_seed(seed)),)


class W(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.model = m

    def forward(self, x):
        return self.model(x)


def detector(seed=0):
    """A Detector in eval mode with seeded weights and non-trivial BatchNorm
    statistics (a fresh BatchNorm is the identity, which would hide folding)."""
    torch.manual_seed(seed)
    net = Detector()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                n = m.running_mean.numel()
                m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
                m.running_var.copy_(0.5 + torch.rand(n, generator=g))
                m.weight.copy_(1 + 0.1 * torch.randn(n, generator=g))
                m.bias.copy_(0.1 * torch.randn(n, generator=g))
    return net.eval()


class KeepsState(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = self.conv(x)
        if not hasattr(self, "offset"):
            self.offset = torch.linspace(0, 1, y.shape[-1]) * 0.5
        return y + self.offset

    @staticmethod
    def make_inputs(seed=0):
        return (torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(seed)),)
