"""PyTorch models for input coverage (issue 51 item 7, test_branch_coverage.py):
inputs the TorchScript exporter drops, one unused and one frozen at its
traced value."""

import torch
import torch.nn as nn


class UnusedInput(nn.Module):
    """y = fc(x); forward also takes `mask` and never reads it, so the
    TorchScript exporter drops it from the ONNX inputs."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, mask):
        return self.fc(x)

    @staticmethod
    def make_inputs(seed=0):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(2, 4, generator=g), torch.ones(2, 4))


class FrozenInput(nn.Module):
    """y = fc(x) * float(scale): the TorchScript trace turns float(scale)
    into a constant and drops `scale` from the ONNX inputs, though PyTorch's
    output reads it (the fault twin of UnusedInput)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, scale):
        return self.fc(x) * float(scale)

    @staticmethod
    def make_inputs(seed=0):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(2, 4, generator=g), torch.tensor(2.0))
