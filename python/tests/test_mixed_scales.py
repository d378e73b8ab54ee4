"""Outputs that mix scales, derived models judged against their float
reference, and the task agreement that fits the output (issue 40 A-C),
end to end on a small detector (mixed_models.py): output0 [1, 84, 256],
rows 0-3 boxes in pixels (~300), rows 4-83 class scores (~1e-4).

- A: the class branch's convolutions x3 (scores off by a median 18%) pass
  one band per output (1e-4 x rms ~ 5x the largest score); judged slice by
  slice along axis 1 they fail, on the score rows only, and the healthy
  export passes, the report saying which band judged which part.
- B: int8 copies against the float model: healthy ones (static QDQ per
  tensor and per channel with the head left in float, dynamic) pass; one
  whose output Concat has one coarse scale (every score quantizes to 0)
  fails, though 4 steps of that scale allow 10 pixels. A healthy static
  QDQ mobilenet_v3_small passes (isolated outliers beyond 4 steps).
- C: top-1 is not reported for the detector; its per-anchor best class and
  score are.

Needs torch, onnxruntime's quantization tools and the built parity binary."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

onnxruntime = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxruntime.quantization")
import mixed_models  # noqa: E402

from parity_binary import PARITY, REPO, needs_parity  # noqa: E402
pytestmark = needs_parity


@pytest.fixture(scope="module")
def det(tmp_path_factory):
    d = tmp_path_factory.mktemp("detector")
    m = {"dir": d, "float": mixed_models.export(d / "float.onnx"),
         "tripled": mixed_models.export(d / "tripled.onnx", factor=3),
         "samples": mixed_models.images(d / "samples.npz")}
    m["qdq"] = mixed_models.quantize_static(m["float"], d / "qdq.onnx")
    m["qdq_channel"] = mixed_models.quantize_static(m["float"], d / "qdq_channel.onnx", per_channel=True)
    m["dynamic"] = mixed_models.quantize_dynamic(m["float"], d / "dynamic.onnx")
    m["head"] = mixed_models.quantize_static(m["float"], d / "head.onnx", head=True)
    m["saturating"] = mixed_models.force_output_scale(m["head"], d / "saturating.onnx", scale=2.498)
    return m


def run_outputs(model, samples, path):
    """The model's outputs on every sample, as SAMPLE/output0 in an npz (parity compare's input)."""
    so = onnxruntime.SessionOptions()
    so.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = onnxruntime.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    feeds = np.load(samples)
    outs = {}
    for key in feeds.files:
        sample = key.split("/")[0]
        outs[f"{sample}_output0"] = s.run(None, {"images": feeds[key]})[0]
    np.savez(path, **outs)
    return path


def compare(ref, test, out):
    r = subprocess.run([PARITY, "compare", str(ref), str(test), "--json", str(out)], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r.returncode, r.stdout, json.loads(out.read_text())


def check(model, out, *args):
    r = subprocess.run([PARITY, "check", str(model), "--runs", "1", "--warmup", "0", "--no-locate", "--json",
                        str(out), *args], capture_output=True, text=True)
    assert out.exists(), r.stdout + r.stderr
    return r.returncode, r.stdout, json.loads(out.read_text())


def outputs(report, output="output0", against=None):
    return [o for s in report["samples"] for o in s["outputs"]
            if o["output"] == output and (against is None or o["against"] == against)]


def test_tripled_class_branch_fails_on_the_score_rows_and_only_there(det):
    d = det["dir"]
    ref = run_outputs(det["float"], det["samples"], d / "ref.npz")
    code, text, report = compare(ref, run_outputs(det["tripled"], det["samples"], d / "tripled.npz"),
                                 d / "tripled.json")
    assert code == 1, text
    tensors = report["tensors"]
    assert len(tensors) == 8 and all(t["status"] == "fail" for t in tensors), text
    for t in tensors:
        slices = t["tolerance"]["slices"]
        assert slices["axis"] == 1 and slices["length"] == 84, slices
        parts = {p["slices"]: p for p in slices["parts"]}
        assert set(parts) == {"0-3", "4-83"}, parts
        assert parts["0-3"]["failed"] == 0 and parts["4-83"]["failed"] >= 40, parts
        assert "slices along axis 1 outside their own band" in t["reason"]
        # One band for the whole output would have passed it: wider than the largest score.
        assert t["tolerance"]["atol"] > 5 * t["metrics"]["max_abs"], t["tolerance"]
    assert "mixed scales along axis 1" in text


def test_float32_noise_passes_on_both_parts(det):
    d = det["dir"]
    ref = run_outputs(det["float"], det["samples"], d / "ref.npz")
    so = onnxruntime.SessionOptions()  # ORT_ENABLE_ALL: fused, reordered sums
    s = onnxruntime.InferenceSession(str(det["float"]), so, providers=["CPUExecutionProvider"])
    feeds = np.load(det["samples"])
    np.savez(d / "fused.npz", **{f"{k.split('/')[0]}_output0": s.run(None, {"images": feeds[k]})[0]
                                 for k in feeds.files})
    code, text, report = compare(ref, d / "fused.npz", d / "fused.json")
    assert code == 0, text
    assert all(t["tolerance"]["slices"] is not None for t in report["tensors"])


def test_check_against_pytorch_judges_each_part_on_its_own_scale(det, tmp_path):
    env_path = f"{REPO}/python:{REPO}/python/tests"
    healthy, tripled = tmp_path / "dump", tmp_path / "dump3"
    for out, factor in ((healthy, 1), (tripled, 3)):
        r = subprocess.run([sys.executable, "-m", "parity.torch", "dump", "mixed_models:detector",
                            "--kwargs", json.dumps({"factor": factor}), "--input", "images=1x3x128x128",
                            "--output-names", "output0", "-o", str(out)],
                           env=dict(os.environ, PYTHONPATH=env_path), capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    # The healthy export against PyTorch: passes, judged per slice on the fp64-calibrated band.
    code, text, report = check(det["float"], tmp_path / "healthy.json", "--torch", str(healthy),
                               "--report", str(tmp_path / "html"))
    rows = outputs(report, against="torch")
    assert len(rows) == 1 and rows[0]["status"] == "pass", text
    slices = rows[0]["tolerance"]["slices"]
    assert slices is not None and [p["slices"] for p in slices["parts"]] == ["0-3", "4-83"]
    assert all("calibrated" in p["rule"] for p in slices["parts"]), slices
    assert "per slice along axis 1" in (tmp_path / "html" / "report.html").read_text()
    # The tripled export is the healthy float model's outputs against the tripled PyTorch model: its score
    # rows fail against PyTorch.
    code, text, report = check(det["float"], tmp_path / "tripled.json", "--torch", str(tripled))
    rows = outputs(report, against="torch")
    assert rows[0]["status"] == "fail", text
    assert "slices along axis 1 outside their own band" in rows[0]["reason"]


@pytest.mark.parametrize("variant", ["qdq", "qdq_channel", "dynamic"])
def test_healthy_int8_copies_pass_against_the_float_model(det, variant, tmp_path):
    code, text, report = check(det[variant], tmp_path / "check.json", "--reference-model", str(det["float"]),
                               "--inputs", str(det["samples"]))
    assert report["stages"]["numerics"]["status"] == "PASS", text
    rows = outputs(report)
    assert len(rows) == 8 and all(o["status"] == "pass" for o in rows)
    assert all(o["tolerance"]["slices"] is not None for o in rows)


@pytest.mark.parametrize("variant", ["head", "saturating"])
def test_an_output_scale_that_zeroes_the_scores_fails(det, variant, tmp_path):
    code, text, report = check(det[variant], tmp_path / "check.json", "--reference-model", str(det["float"]),
                               "--inputs", str(det["samples"]))
    assert code == 1 and report["stages"]["numerics"]["status"] == "FAIL", text
    rule = next(r for r in report["quant"]["outputs"] if r["output"] == "output0")
    assert rule["rule"] == "qdq_steps" and rule["reference_fraction"] == 0.25
    assert rule["atol"] >= 4 * 1.38  # 4 steps of the Concat's scale: wider than every score
    for o in outputs(report):
        assert o["status"] == "fail"
        parts = {p["slices"]: p for p in o["tolerance"]["slices"]["parts"]}
        assert parts["4-83"]["failed"] == 80, parts  # every score row; the boxes are on that grid's scale
        assert "capped at 0.25 x rms(ref)" in parts["4-83"]["rule"]


def test_the_detector_gets_per_anchor_agreement_not_top1(det, tmp_path):
    code, text, report = check(det["qdq"], tmp_path / "check.json", "--reference-model", str(det["float"]),
                               "--inputs", str(det["samples"]))
    assert report["top1"] == [], report["top1"]
    (d,) = report["detections"]
    assert d["output"] == "output0" and d["class_axis"] == 1 and d["classes"] == 80
    assert d["anchors_per_sample"] == 256 and d["samples"] == 8 and d["anchors"] == 8 * 256
    assert d["detections"] == 0  # scores ~1e-4: no anchor reaches 0.25
    assert 0 <= d["max_score_diff"] < 1e-4
    assert "top-1 agreement" not in text and "detector output 'output0'" in text


def test_a_healthy_static_qdq_mobilenet_passes_its_isolated_step_outliers(tmp_path):
    pytest.importorskip("torchvision")
    import quant_models
    f = quant_models.export_cnn("mobilenet_v3_small", tmp_path / "float.onnx", size=224)
    q = quant_models.quantize_qdq(f, tmp_path / "qdq.onnx", {"input": ((1, 3, 224, 224), np.float32)})
    samples = quant_models.classifier_samples(tmp_path / "samples.npz", n=16, shape=(1, 3, 224, 224))
    code, text, report = check(q, tmp_path / "check.json", "--reference-model", str(f), "--inputs", str(samples))
    assert report["stages"]["numerics"]["status"] == "PASS", text
    top1 = {t["output"]: t for t in report["top1"]}
    assert top1["logits"]["rows"] == 16
