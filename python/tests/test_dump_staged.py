"""`parity.torch dump` never reuses a module an export traced, and a failed
dump leaves no folder behind (issue 40)."""

import os

import pytest
import torch
import torch.nn as nn

from conftest import HAS_DYNAMO, check_manifest, run_module
from parity.torch.dumper import dump
from parity.torch.exporter import export
from wrapper_models import KeepsState


@pytest.mark.skipif(not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")
def test_dump_after_a_dynamo_export_runs_an_untraced_module(tmp_dir):
    """KeepsState keeps a tensor from its first call: traced by torch.export,
    that is a FakeTensor, and a dump of the traced module died on `.numpy()`."""
    out, model = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run_module("parity.torch", "dump", "wrapper_models:KeepsState", "-o", out, "--export", model,
                   "--exporter", "dynamo", "--dynamic", "x:0:batch")
    assert r.returncode == 0, r.stderr
    m = check_manifest(out)
    assert [l["module"] for l in m["layers"]] == ["conv"]
    # The caller's module is not the one traced.
    net = KeepsState().eval()
    export(net, net.make_inputs(), model, exporter="dynamo")
    assert not hasattr(net, "offset")


class FailsMidway(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.boom = nn.ReLU()
        self.boom.register_forward_hook(lambda *_: (_ for _ in ()).throw(RuntimeError("boom")))

    def forward(self, x):
        return self.boom(self.conv(x))


def test_a_failed_dump_leaves_no_folder(tmp_dir):
    out = os.path.join(tmp_dir, "d")
    with pytest.raises(RuntimeError, match="boom"):
        dump(FailsMidway(), (torch.randn(1, 3, 8, 8),), out)
    assert os.listdir(tmp_dir) == []


def test_a_failed_dump_into_a_dump_leaves_it_incomplete_and_nothing_beside(tmp_dir):
    out = os.path.join(tmp_dir, "d")
    os.makedirs(out)
    with open(os.path.join(out, "model.onnx"), "w") as f:
        f.write("not a dump's file")
    dump(KeepsState(), KeepsState.make_inputs(), out)
    with pytest.raises(FileExistsError, match="already holds a dump"):  # replaced only on request
        dump(FailsMidway(), (torch.randn(1, 3, 8, 8),), out)
    assert os.path.exists(os.path.join(out, "manifest.json"))
    with pytest.raises(RuntimeError, match="boom"):
        dump(FailsMidway(), (torch.randn(1, 3, 8, 8),), out, force=True)
    assert not os.path.exists(os.path.join(out, "manifest.json"))  # asked to be replaced: incomplete
    assert sorted(os.listdir(tmp_dir)) == ["d"]
    assert not any(f.startswith("layer_0001") for f in os.listdir(out))  # nothing of the failed dump
    # A dump that succeeds replaces the dump's files and keeps the others.
    dump(nn.Sequential(nn.ReLU()), (torch.randn(2, 2),), out, force=True)
    assert [l["module"] for l in check_manifest(out)["layers"]] == ["0"]
    assert not any(f.startswith("layer_0000_conv") for f in os.listdir(out))
    assert os.path.exists(os.path.join(out, "model.onnx"))
