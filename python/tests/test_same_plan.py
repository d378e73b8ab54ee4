"""One session for both configs (src/engine/check/check_reference_same_plan.h):
a target whose optimizers change nothing in the graph serves the reference's
pass too, and a target whose optimizers fuse keeps both sessions and still
catches the fusion's fault. The model: a written-out LayerNorm on rows far
from zero, where ORT's LayerNormFusion kernel differs from the unfused graph
by ~1e-3 (fix_models.decomposed_layernorm)."""

import json
import subprocess

import pytest

pytest.importorskip("torch")
import fix_models  # noqa: E402

from parity_binary import PARITY, needs_parity  # noqa: E402

pytestmark = needs_parity

SERVED_BOTH = "one session served both"
BAND = ["--mode", "fixed", "--atol", "1e-4", "--rtol", "1e-4", "--runs", "1"]
# Every optimizer that changes this graph at `all` (ORT 1.29's log says so).
FUSIONS = ["--disable-optimizer", "LayerNormFusionL1", "--disable-optimizer", "SimplifiedLayerNormFusion"]


def check(tmp_path, *args):
    out = tmp_path / "report.json"
    model = fix_models.decomposed_layernorm(tmp_path / "ln.onnx")
    rows = fix_models.offset_rows(tmp_path / "rows.npz", mean=100)
    r = subprocess.run([PARITY, "check", str(model), "--inputs", str(rows), *BAND, *args, "--json", str(out)],
                       capture_output=True, text=True)
    with open(out, encoding="utf-8") as f:
        return r.returncode, r.stdout, json.load(f)


def served_both(report):
    return [n for n in report["notes"] if SERVED_BOTH in n]


def test_a_fusion_that_changes_the_numbers_keeps_two_sessions_and_fails(tmp_path):
    code, text, report = check(tmp_path)
    assert code == 1, text
    assert not served_both(report), report["notes"]
    loads = [f for s in report["stages"].values() for f in s["findings"] if f["id"].startswith("syntax.ort_load.")]
    assert [f["id"] for f in loads] == ["syntax.ort_load.reference", "syntax.ort_load.target"]
    assert "[disable]" in loads[0]["message"] and SERVED_BOTH not in loads[0]["message"]
    steps = {s["step"]: s["runs"] for s in report["ort_runs"]["steps"]}
    assert steps.get("numerics", 0) >= 1  # the target ran the sample itself


def test_with_its_fusions_off_the_target_serves_the_reference_too(tmp_path):
    """Healthy twin: the same model and rows, the two optimizers that change
    it switched off: the probe finds nothing modified, one session runs the
    sample once for both sides, the check passes with max_abs 0."""
    code, text, report = check(tmp_path, *FUSIONS)
    assert code == 0, text
    [note] = served_both(report)
    assert "[all -LayerNormFusionL1 -SimplifiedLayerNormFusion]" in note and "[disable]" in note, note
    assert SERVED_BOTH in text
    steps = {s["step"]: s["runs"] for s in report["ort_runs"]["steps"]}
    assert "numerics" not in steps, steps  # the reference's pass's run was the target's
    judged = [o for s in report["samples"] for o in s["outputs"]]
    assert judged and all(o["metrics"]["max_abs"] == 0 for o in judged), judged
