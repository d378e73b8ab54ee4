"""dump(): directory layout, manifest, dtypes, order, repeated calls, flattening."""

import os

import numpy as np
import pytest
import torch
import torch.nn as nn

import parity.torch as ptorch
from zoo import models
from parity.torch.flatten import flatten

from conftest import check_manifest, load_tensor, run_direct


def _dump(model_cls, tmp_dir, **kw):
    torch.manual_seed(0)
    model = model_cls()
    args = model.make_inputs(0) if model_cls is not models.ConvBnRelu else model.make_inputs(0, 32)
    manifest = ptorch.dump(model, args, tmp_dir, **kw)
    return model, args, manifest


def test_conv_bn_relu_layers_inputs_outputs(tmp_dir):
    model, args, m = _dump(models.ConvBnRelu, tmp_dir)
    assert check_manifest(tmp_dir) == m
    assert [(l["module"], l["type"], l["call"], l["output_index"]) for l in m["layers"]] == [
        ("conv", "Conv2d", 0, None), ("bn", "BatchNorm2d", 0, None), ("relu", "ReLU", 0, None)]
    assert [l["file"] for l in m["layers"]] == [
        "layer_0000_conv.npy", "layer_0001_bn.npy", "layer_0002_relu.npy"]
    assert m["inputs"] == {"input": "input_input.npy"}
    assert m["outputs"] == {"output_0": "output_output_0.npy"}
    assert np.array_equal(load_tensor(tmp_dir, "input_input.npy"), args[0].numpy())
    expected = run_direct(model, args).numpy()
    assert load_tensor(tmp_dir, "output_output_0.npy").tobytes() == expected.tobytes()
    assert m["layers"][0]["is_leaf"] and m["layers"][0]["min"] <= m["layers"][0]["mean"]


def test_tuple_twice_calls_numbered_and_tuples_flattened(tmp_dir):
    model, args, m = _dump(models.TupleTwice, tmp_dir, output_names=["y", "h"])
    check_manifest(tmp_dir)
    got = [(l["module"], l["call"], l["output_index"]) for l in m["layers"]]
    assert got == [("fc", 0, None), ("act", 0, None), ("fc", 1, None), ("act", 1, None),
                   ("halves", 0, 0), ("halves", 0, 1), ("head", 0, None)]
    assert m["layers"][2]["file"] == "layer_0002_fc.call1.npy"
    assert m["layers"][4]["file"] == "layer_0004_halves.out0.npy"
    assert m["layers"][4]["order"] == m["layers"][5]["order"]
    assert m["outputs"] == {"y": "output_y.npy", "h": "output_h.npy"}
    y, h = run_direct(model, args)
    assert load_tensor(tmp_dir, "output_y.npy").tobytes() == y.numpy().tobytes()
    assert load_tensor(tmp_dir, "output_h.npy").tobytes() == h.numpy().tobytes()
    # The second call of `act` is what `halves` splits.
    act1 = load_tensor(tmp_dir, "layer_0003_act.call1.npy")
    assert np.array_equal(np.concatenate([load_tensor(tmp_dir, m["layers"][i]["file"]) for i in (4, 5)], -1), act1)


def test_layer_order_is_hook_order_with_containers(tmp_dir):
    model, args, m = _dump(models.YoloLike, tmp_dir)
    check_manifest(tmp_dir)
    seen = []
    handles = [mod.register_forward_hook(lambda *a, n=n: seen.append(n))
               for n, mod in model.named_modules() if n]
    run_direct(model, args)
    for h in handles:
        h.remove()
    assert [l["module"] for l in m["layers"]] == seen
    # containers finish after their children; the root is not dumped
    names = [l["module"] for l in m["layers"]]
    assert names.index("stem.2") < names.index("stem") and "" not in names
    assert not m["layers"][names.index("stem")]["is_leaf"]
    assert len(m["outputs"]) == 3


def test_inplace_relu_does_not_overwrite_recorded_batchnorm(tmp_dir):
    class InplaceNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(4)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.bn(x))

    m = ptorch.dump(InplaceNet(), torch.randn(3, 4), tmp_dir)
    bn = load_tensor(tmp_dir, m["layers"][0]["file"])
    assert bn.min() < 0
    assert np.array_equal(load_tensor(tmp_dir, m["layers"][1]["file"]), np.maximum(bn, 0))


def test_transformer_dumps_submodules_and_matches_slow_path(tmp_dir):
    model, args, m = _dump(models.TinyTransformer, tmp_dir)
    check_manifest(tmp_dir)
    assert m["fastpath"] is False
    modules = [l["module"] for l in m["layers"]]
    for sub in ("encoder.layers.0.self_attn", "encoder.layers.0.linear1", "encoder.layers.0.norm1",
                "encoder.layers.1.norm2", "encoder.layers.1", "encoder"):
        assert sub in modules
    attn = m["layers"][modules.index("encoder.layers.0.self_attn")]
    assert attn["output_index"] == 0  # (output, None): the None is skipped
    expected = run_direct(model, args, slow=True).detach().numpy()
    assert load_tensor(tmp_dir, m["outputs"]["output_0"]).tobytes() == expected.tobytes()


def test_train_mode_and_rng_restored(tmp_dir):
    model = models.TupleTwice().train()
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    ptorch.dump(model, model.make_inputs(0), tmp_dir, seed=7)
    assert torch.rand(1).item() == before.item()
    assert all(mod.training for mod in model.modules())


def test_dtypes_written_as_is_and_bfloat16_as_raw_bits(tmp_dir):
    class Casts(nn.Module):
        def forward(self, x, idx, mask):
            return x.half(), x.double(), x.bfloat16(), idx.int(), mask, idx

    x = torch.randn(2, 3)
    idx = torch.arange(6).reshape(2, 3)
    mask = x > 0
    m = ptorch.dump(Casts(), (x, idx, mask), tmp_dir)
    check_manifest(tmp_dir)
    assert m["inputs"] == {"x": "input_x.npy", "idx": "input_idx.npy", "mask": "input_mask.npy"}
    dtypes = [d["dtype"] for d in m["output_details"]]
    assert dtypes == ["float16", "float64", "bfloat16", "int32", "bool", "int64"]
    raw = load_tensor(tmp_dir, m["outputs"]["output_2"])
    assert raw.dtype.str == "|V2"
    bits = torch.from_numpy(raw.view(np.int16).copy()).view(torch.bfloat16)
    assert torch.equal(bits, x.bfloat16())


def test_fp64_outputs(tmp_dir):
    model, args, m = _dump(models.ConvBnRelu, tmp_dir, fp64=True)
    check_manifest(tmp_dir)
    assert m["outputs_fp64"] == {"output_0": "fp64/output_output_0.npy"}
    out64 = load_tensor(tmp_dir, "fp64/output_output_0.npy")
    out32 = load_tensor(tmp_dir, "output_output_0.npy")
    assert out64.dtype == np.float64
    assert np.allclose(out64, out32, atol=1e-4)
    assert next(model.parameters()).dtype == torch.float32  # the copy, not the model


def test_stale_files_removed_and_failure_leaves_no_manifest(tmp_dir):
    _dump(models.YoloLike, tmp_dir)
    _dump(models.ConvBnRelu, tmp_dir, force=True)
    files = sorted(f for f in os.listdir(tmp_dir) if f.startswith("layer_"))
    assert files == ["layer_0000_conv.npy", "layer_0001_bn.npy", "layer_0002_relu.npy"]

    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            self.fc(x)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        ptorch.dump(Broken(), torch.randn(1, 3), tmp_dir, force=True)
    assert not os.path.exists(os.path.join(tmp_dir, "manifest.json"))
    assert not [f for f in os.listdir(tmp_dir) if ".tmp-" in f]


def test_module_paths_sanitised_and_dict_outputs_flattened(tmp_dir):
    class DictOut(nn.Module):
        def forward(self, x):
            return {"a": x + 1, "skip": None, "b": (x * 2, 3)}

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module("we ird/name", DictOut())

        def forward(self, x):
            return getattr(self, "we ird/name")(x)

    m = ptorch.dump(Outer(), torch.ones(2), tmp_dir)
    check_manifest(tmp_dir)
    assert [l["file"] for l in m["layers"]] == [
        "layer_0000_we_ird_name.out0.npy", "layer_0001_we_ird_name.out1.npy"]
    assert [l["output_index"] for l in m["layers"]] == [0, 1]
    assert list(m["outputs"]) == ["output_0", "output_1"]


def test_flatten_order():
    t = [torch.tensor(i) for i in range(4)]
    assert [int(x) for x in flatten((t[0], {"k": [t[1], None], "j": t[2]}, "s", t[3]))] == [0, 1, 2, 3]


def test_yolo_like_any_batch_and_multiple_of_32():
    model = models.YoloLike().eval()
    with torch.no_grad():
        outs = model(*model.make_inputs(0, batch=2, height=96, width=128))
    assert [tuple(o.shape) for o in outs] == [(2, 16, 12, 16), (2, 16, 6, 8), (2, 16, 3, 4)]
