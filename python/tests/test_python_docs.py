"""docs/python.md's pytest example, run as written (it passes) and with a
fault planted in layer3.0.conv2 (it fails with a readable message)."""
import os
import re

import pytest
import torch

try:
    import parity
    from parity import _core  # noqa: F401
except ImportError as e:
    if os.environ.get("PARITY_REQUIRE_PACKAGE"):  # make test builds it first: its absence is a failure
        raise
    pytest.skip(f"the parity package is not installed (pip install .): {e}", allow_module_level=True)
import torchvision  # noqa: E402  (pinned in .venv)

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


def docs_example():
    text = open(DOCS, encoding="utf-8").read()
    m = re.search(r"```python\n(# test_resnet_export\.py\n.*?)```", text, re.S)
    assert m, "docs/python.md lost its test_resnet_export.py example"
    ns = {}
    exec(compile(m.group(1), "docs/python.md:test_resnet_export.py", "exec"), ns)
    return ns["test_resnet18_export_matches"]


class ScaledWhileExporting(torch.nn.Module):
    """A planted fault: PyTorch runs `inner`, the exporter records inner * 1.05."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        y = self.inner(x)
        return y * 1.05 if torch.onnx.is_in_onnx_export() else y


def test_docs_example_passes():
    docs_example()()


def test_docs_example_fails_readably_with_a_planted_fault(monkeypatch):
    original = torchvision.models.resnet18

    def planted(**kwargs):
        model = original(**kwargs)
        model.layer3[0].conv2 = ScaledWhileExporting(model.layer3[0].conv2)
        return model

    monkeypatch.setattr(torchvision.models, "resnet18", planted)
    with pytest.raises(AssertionError) as e:
        docs_example()()
    message = str(e.value)
    print(message)
    assert "does not match PyTorch" in message
    assert "layer3.0.conv2" in message, message
    assert "logits" in message, message
    html = re.search(r"HTML report: (\S+)", message).group(1)
    assert os.path.isfile(html)
