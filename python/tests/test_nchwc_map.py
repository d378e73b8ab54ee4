"""One-to-one maps for ORT's NCHWc layout (issue 53 item 2, docs/locate.md).

At `all` on x86 ORT's NchwcTransformer rewrites a resnet18 trunk into
com.microsoft.nchwc nodes joined by blocked tensors; parity used to see one
fused node covering 63 original nodes. Each nchwc node is now mapped to the
original node(s) it computes (engine/run/layout_alias.h). A torchvision
resnet18 (random seeded weights, 10 classes) with one Conv's weight x1.01 in a
copy is named at that Conv's own nchwc node in the console, the JSON, the HTML
report, the dataset ranking and the Model Explorer overlays (the culprit alone
over the tolerance); its healthy twin passes.

Needs torch, torchvision and the built parity binary; skipped otherwise."""

import json
import re
import subprocess

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
onnx = pytest.importorskip("onnx")

from parity_binary import PARITY, needs_parity  # noqa: E402

pytestmark = needs_parity

PLANTED = "/layer2/layer2.1/conv1/Conv"
NCHWC = "com.microsoft.nchwc"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("nchwc_map")
    torch.manual_seed(0)
    net = torchvision.models.resnet18(num_classes=10).eval()
    x = torch.randn(1, 3, 64, 64)
    out = {"dir": d, "float": d / "float.onnx", "bad": d / "bad.onnx"}
    torch.onnx.export(net, (x,), str(out["float"]), input_names=["input"], output_names=["logits"],
                      opset_version=17, dynamo=False)
    m = onnx.load(str(out["float"]))
    weight = next(n.input[1] for n in m.graph.node if n.name == PLANTED)
    init = next(i for i in m.graph.initializer if i.name == weight)
    w = onnx.numpy_helper.to_array(init) * np.float32(1.01)  # the planted fault
    init.CopyFrom(onnx.numpy_helper.from_array(w.astype(np.float32), weight))
    onnx.save(m, str(out["bad"]))
    data = d / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    np.savez(data / "part0.npz", **{f"s{i:02d}/input": rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
                                     for i in range(8)})
    out["data"] = data
    return out


def parity(*args):
    r = subprocess.run([PARITY, *map(str, args)], capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r


def nchwc_plan(report):
    return [f for f in report["locate"]["fused_nodes"] if f.get("domain") == NCHWC]


def test_the_planted_conv_is_named_at_its_own_nchwc_node_in_every_format(models, tmp_path):
    report, me = tmp_path / "report", tmp_path / "me"
    r = parity("check", models["bad"], "--reference-model", models["float"], "--runs", 1, "--warmup", 0,
               "--report", report, "--model-explorer", me)
    assert r.returncode == 1, r.stdout + r.stderr
    j = json.loads((report / "report.json").read_text())
    loc = j["locate"]
    fused = nchwc_plan(j)
    if not fused:
        pytest.skip("ORT made no NCHWc plan here (not x86)")
    # JSON: every nchwc node is its own fused node, one computing node each.
    assert len(fused) >= 20, [f["name"] for f in fused]
    for f in fused:
        assert f["op_types"] == [f["op_type"]], f
        assert sum(c.endswith("Conv") for c in f["covers"]) <= 1, f
    assert loc["observer_check"] is True
    top = loc["culprits"][0]
    assert PLANTED in top["covers"] and top["fused_node"].endswith("_nchwc"), top
    assert len([c for c in top["covers"] if not c.startswith("Identity")]) <= 3, top
    assert loc["first_divergence"]["fused_node"] == top["fused_node"]
    # Console: the culprit is that one node, not a narrowed region.
    culprit_line = next(line for line in r.stdout.splitlines() if "top culprit:" in line)
    assert top["fused_node"] in culprit_line and "(Conv) covering" in culprit_line, culprit_line
    assert "narrowed from" not in culprit_line
    # HTML: the node is named, no chain of ops.
    html = re.sub(r"<wbr>|&#8203;|\u200b", "", (report / "report.html").read_text())  # break hints
    assert top["fused_node"] in html and "Conv+MaxPool+Conv" not in html
    # Model Explorer: the culprit alone over the tolerance, on both graphs.
    local = json.loads((me / "optimized_local.json").read_text())["results"]
    red = [k for k, v in local.items() if v["value"] > 1]
    assert red == [top["fused_node"]], local
    original_local = json.loads((me / "original_local.json").read_text())["results"]
    assert {k for k, v in original_local.items() if v["value"] > 1} <= set(top["covers"]), original_local
    assert original_local[PLANTED]["value"] > 1


def test_the_healthy_twin_passes(models):
    r = parity("check", models["float"], "--runs", 1, "--warmup", 0)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("PASS")


def test_the_dataset_ranking_names_one_node(models, tmp_path):
    report = tmp_path / "report"
    r = parity("check", models["bad"], "--reference-model", models["float"], "--dataset", models["data"],
               "--report", report)
    assert r.returncode == 1, r.stdout + r.stderr
    j = json.loads((report / "report.json").read_text())
    top = j["ranking"][0]
    assert top["node"] == PLANTED and top["fused_node"].endswith("_nchwc"), top
    assert "+" not in top["op_type"] and len([c for c in top["covers"] if not c.startswith("Identity")]) <= 3, top
    assert f"first diverge at Conv '{top['fused_node']}'" in r.stdout, r.stdout
