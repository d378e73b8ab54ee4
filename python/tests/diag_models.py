"""Small PyTorch modules for the verdict-diagnosis tests (test_diagnosis.py):
a stride-2 convolution exported with the input's height/width labels on its
output too, a T5-style RMSNorm block that ONNX Runtime's transformers
optimizer fuses into its own SimplifiedLayerNormalization, and a valid-padded
convolution that refuses a 1x1 image."""

import torch
from torch import nn


def _randn(seed, *shape):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


class Downsampler(nn.Module):
    """(N, 3, H, W) -> (N, 4, H/2, W/2)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, 2, 1)

    def forward(self, images):
        return torch.relu(self.conv(images))

    @staticmethod
    def make_inputs(seed=0, batch=1, height=32, width=32):
        return (_randn(seed, batch, 3, height, width),)


class RmsNorm(nn.Module):
    """T5's layer norm: no mean, no bias."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * _randn(3, d))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class Residual(nn.Module):
    """x + fc(norm(x)): the residual Add is the block's output."""

    def __init__(self, d):
        super().__init__()
        self.norm, self.fc = RmsNorm(d), nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc(self.norm(x))


class RmsBlock(nn.Module):
    """Two residual blocks and a final RMSNorm: ORT's optimizer fuses each
    block's residual Add into the next norm (SkipSimplifiedLayerNormalization),
    so a block's output has no ONNX tensor of its own."""

    def __init__(self, d=32):
        super().__init__()
        self.block1, self.block2 = Residual(d), Residual(d)
        self.norm = RmsNorm(d)

    def forward(self, hidden):
        return self.norm(self.block2(self.block1(hidden)))

    @staticmethod
    def make_inputs(seed=0, batch=1, seq=8, d=32):
        return (_randn(seed, batch, seq, d),)


class ValidConv(nn.Module):
    """A 3x3 convolution without padding: a 1x1 image is too small for it,
    in PyTorch as in ONNX Runtime."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, images):
        return self.conv(images)

    @staticmethod
    def make_inputs(seed=0, batch=1, height=32, width=32):
        return (_randn(seed, batch, 3, height, width),)
