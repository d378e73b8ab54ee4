"""`parity view DIR` (issue 53 item 3, docs/model-explorer.md "parity view"):
the page it opens for a resnet18 with one Conv x1.01 at `all` (both graphs
side by side, overlays on each, both panes at the first divergent node), the
sync-navigation mapping it writes (each fused node with the original nodes it
covers, by the ONNX adapter's ids), its one-line errors (exit 2), and the page
in headless Chromium (scripts/model_explorer_view_screenshot.py).

Needs torch, torchvision, ai-edge-model-explorer, model-explorer-onnx and the
built parity binary; the browser test needs /usr/bin/chromium."""

import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

pytest.importorskip("model_explorer")
adapter_main = pytest.importorskip("model_explorer_onnx.main")

from parity_binary import PARITY, needs_parity  # noqa: E402
from test_nchwc_map import PLANTED, models  # noqa: E402,F401  (the module's fixture)

pytestmark = needs_parity
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def checked(models, tmp_path_factory):  # noqa: F811
    d = tmp_path_factory.mktemp("view")
    r = subprocess.run([PARITY, "check", str(models["bad"]), "--reference-model", str(models["float"]), "--runs", "1",
                        "--warmup", "0", "--report", str(d / "report"), "--model-explorer", str(d / "me")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    return {"report": d / "report", "me": d / "me", **models}


def view(*args, env=None):
    return subprocess.run([PARITY, "view", *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=env)


def test_the_page_holds_both_graphs_at_the_first_divergent_node(checked):
    for folder in (checked["me"], checked["report"]):  # the overlays' folder, or the report that links it
        r = view(folder, "--print-url")
        assert r.returncode == 0, r.stderr
        data = json.loads(urllib.parse.unquote(r.stdout.strip().split("?data=", 1)[1]))
        left, right = data["uiState"]["paneStates"]
        assert [Path(m["url"]).name for m in data["models"]] == ["bad.onnx", "optimized.onnx"]
        assert left["widthFraction"] == right["widthFraction"] == 0.5
        assert left["selectedNodeId"].startswith("/layer2/layer2.1/")  # the planted Conv's Relu
        assert right["selectedNodeId"].endswith("_nchwc") and right["selectedGraphId"] != left["selectedGraphId"]
        assert sorted(set(data["nodeDataTargets"])) == ["bad.onnx", "optimized.onnx"]
        assert len(data["nodeData"]) == len(data["nodeDataTargets"]) >= 6


def test_the_sync_mapping_pairs_each_fused_node_with_what_it_covers(checked):
    sync = json.loads((checked["me"] / "sync_navigation.json").read_text())["mappingEntries"]
    original = {n.id for g in adapter_main.ONNXAdapter().convert(str(checked["bad"]), {})["graphs"] for n in g.nodes}
    optimized = {n.id for g in adapter_main.ONNXAdapter().convert(str(checked["me"] / "optimized.onnx"), {})["graphs"]
                 for n in g.nodes}
    for e in sync:
        assert set(e["leftNodeIds"]) <= original and set(e["rightNodeIds"]) <= optimized, e
    planted = [e for e in sync if PLANTED in e["leftNodeIds"]]
    assert len(planted) == 1 and len(planted[0]["rightNodeIds"]) == 1, planted


def test_bad_input_is_one_line_and_exit_2(checked, tmp_path):
    r = view(tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "view.json" in r.stderr, r.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PARITY_PYTHON"] = "/usr/bin/python3"  # a Python without parity
    r = view(checked["me"], "--no-browser", env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "parity.view" in r.stderr, r.stderr


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="chromium is not installed")
def test_the_page_in_a_browser_shows_both_panes(checked, tmp_path):
    png = tmp_path / "view.png"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "model_explorer_view_screenshot.py"), str(checked["me"]),
                        str(png)], capture_output=True, text=True, timeout=400)
    assert r.returncode == 0, r.stdout + r.stderr
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert seen["panes"] >= 2 and seen["optimized_shown"], seen
    assert png.stat().st_size > 50_000
