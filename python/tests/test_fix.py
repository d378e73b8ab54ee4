"""`parity fix` (issue 53, docs/fix.md): given a failing check, the smallest
change that makes the same check pass, searched from the localization and
verified by checking again. Each case prints its measurement (the verdicts,
the change, the checks the search ran and its time, the cost), which
docs/fix.md quotes.

Needs torch/torchvision, onnxruntime's quantization and float16 tools, and
the built parity binary; skipped otherwise."""

import json
import os
import subprocess

import pytest

pytest.importorskip("torchvision")
pytest.importorskip("onnxruntime.quantization")
import fix_models  # noqa: E402
import quant_models  # noqa: E402

from parity_binary import PARITY, REPO, needs_parity  # noqa: E402
pytestmark = needs_parity


def fix(tmp_path, *args):
    """`parity fix ARGS --out OUT --json J`: (exit code, stdout, parity.fix/1)."""
    out = tmp_path / "fix.json"
    env = dict(os.environ, PARITY_PYTHON=os.environ.get("PARITY_PYTHON", os.path.join(REPO, ".venv", "bin", "python")))
    r = subprocess.run([PARITY, "fix", *map(str, args), "--out", str(tmp_path / "out"), "--json", str(out)],
                       capture_output=True, text=True, env=env)
    report = None
    if out.exists():
        with open(out, encoding="utf-8") as f:
            report = json.load(f)
        import jsonschema
        with open(os.path.join(REPO, "docs", "fix.schema.json"), encoding="utf-8") as f:
            jsonschema.validate(report, json.load(f))
    return r.returncode, r.stdout + r.stderr, report


def measured(name, report):
    """One line docs/fix.md quotes."""
    cost = {c["form"]: c for c in report["cost"]}
    print(f"\nMEASURED {name}: {report['verdict_before']} -> {report['verdict_after']}, change {report['change']}"
          f" {report['level'] or ''}, {report['search']['runs']} checks in {report['search']['seconds']:.1f} s, "
          + ", ".join(f"{k} {v['latency_ms']} ms {v['size_bytes']} B" for k, v in cost.items())
          + (f", {'; '.join(report['top1'])}" if report["top1"] else ""))


def check(model, *args):
    r = subprocess.run([PARITY, "check", str(model), "--runs", "1", *map(str, args)], capture_output=True, text=True)
    return r.returncode, r.stdout


def test_a_clipping_int8_quantizer_is_fixed_by_keeping_it_and_its_reader_in_float(tmp_path):
    """The output quantizer of layer3.1.conv1 clips (scale 16x too fine):
    top-1 on held-out inputs (not the calibration samples) drops. Re-quantized
    with the deployed scales pinned, keeping the producer alone or the reader
    alone in float leaves the clipped tensor quantized; both restore it."""
    m = fix_models.clipped_int8(tmp_path)
    held = quant_models.classifier_samples(tmp_path / "held.npz", n=32)
    code, text, report = fix(tmp_path, m["clipped"], "--reference-model", m["float"], "--inputs", held,
                             "--calibration", m["calibration"])
    assert code == 0, text
    assert report["kind"] == "int8" and report["found"] and report["verdict_after"] == "PASS", text
    assert report["verdict_before"] == "FAIL"
    assert report["seeds"] == [m["conv"]], report["seeds"]  # the clipping quantizer's layer
    assert sorted(report["change"]) == ["/layer3/layer3.1/conv1/Conv", "/layer3/layer3.1/conv2/Conv"], report
    assert report["search"]["minimal"]
    assert report["settings"]["pinned_activations"] > 0 and report["settings"]["format"] == "QDQ"
    before, after = report["top1"][0].split(" before, ")
    assert after.startswith("32/32"), report["top1"]
    assert not before.endswith("32/32"), report["top1"]
    # The fixed model is written beside nothing it overwrites, and the command checks it.
    assert os.path.exists(report["written"]) and report["command"].startswith("parity check ")
    assert check(report["written"], "--reference-model", m["float"], "--inputs", held)[0] == 0
    # The reader alone, as the search measured it, does not pass.
    singles = {tuple(p["change"]): p["passed"] for p in report["search"]["probes"]}
    assert singles[("/layer3/layer3.1/conv2/Conv",)] is False
    measured("int8 clipped quantizer", report)


def test_the_int8_driver_re_makes_the_deployed_copy_when_nothing_is_excluded(tmp_path):
    """The driver pins the deployed copy's activation scales: re-quantized
    with nothing excluded, the clipped copy comes back with the same outputs,
    so a change that passes is the exclusion, not a new calibration."""
    import numpy as np
    import onnxruntime as ort
    m = fix_models.clipped_int8(tmp_path)
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"kind": "int8", "float_model": str(m["float"]), "derived_model": str(m["clipped"]),
                                   "out": str(tmp_path / "remade.onnx"), "exclude": [],
                                   "calibration": [str(m["calibration"])]}))
    r = subprocess.run([os.path.join(REPO, ".venv", "bin", "python"), "-m", "parity._fix_driver", str(request)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    answer = json.loads(r.stdout.strip().splitlines()[-1])
    assert answer["ok"], answer
    assert answer["settings"]["pinned_activations"] > 20 and answer["settings"]["per_channel"] is False
    x = np.load(str(quant_models.classifier_samples(tmp_path / "one.npz", n=1)))["s000/input"]
    run = {p: ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
           for p in (m["clipped"], tmp_path / "remade.onnx", m["qdq"])}
    assert np.array_equal(run[m["clipped"]], run[tmp_path / "remade.onnx"])
    assert not np.array_equal(run[m["qdq"]], run[tmp_path / "remade.onnx"])  # the clipping is reproduced
    # The driver never overwrites: the same request again is refused.
    again = subprocess.run([os.path.join(REPO, ".venv", "bin", "python"), "-m", "parity._fix_driver", str(request)],
                           capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python")))
    assert "never overwrites" in json.loads(again.stdout.strip().splitlines()[-1])["error"]


def test_an_overflowing_float16_chain_is_fixed_by_a_block_list_of_two_convs(tmp_path):
    """A Conv whose float outputs reach 2.6e6 and the Conv that scales them
    back: in float16 they overflow. The converter's node_block_list with both
    (their float -> float16 -> float Cast pair removed) passes."""
    m = fix_models.overflowing_fp16(tmp_path, gain=1e6)
    inputs = quant_models.classifier_samples(tmp_path / "in.npz", n=8, shape=(1, 3, 32, 32))
    code, text, report = fix(tmp_path, m["fp16"], "--reference-model", m["float"], "--inputs", inputs)
    assert code == 0, text
    assert report["kind"] == "float16" and report["found"] and report["verdict_after"] == "PASS", text
    assert report["seeds"] == ["/hot/Conv"], report  # the first layer past 65504
    assert sorted(report["change"]) == ["/cool/Conv", "/hot/Conv"], report
    assert report["settings"]["float16_round_trips_removed"] >= 1
    assert check(report["written"], "--reference-model", m["float"], "--inputs", inputs)[0] == 0
    measured("float16 overflowing chain", report)


def test_a_fusion_that_changes_the_numbers_is_fixed_by_switching_its_optimizer_off(tmp_path):
    """A written-out LayerNorm on rows far from zero: ORT's LayerNormFusion
    kernel differs from the unfused graph by ~1e-3, past a fixed 1e-4 band."""
    model = fix_models.decomposed_layernorm(tmp_path / "ln.onnx")
    rows = fix_models.offset_rows(tmp_path / "rows.npz", mean=100)
    flags = ["--inputs", rows, "--mode", "fixed", "--atol", "1e-4", "--rtol", "1e-4"]
    assert check(model, *flags)[0] == 1
    code, text, report = fix(tmp_path, model, *flags)
    assert code == 0, text
    assert report["kind"] == "optimizers" and report["change"] == ["LayerNormFusionL1"], text
    assert report["verdict_after"] == "PASS" and report["search"]["runs"] == 1
    with open(report["written"], encoding="utf-8") as f:
        assert json.load(f)["disable_optimizers"] == ["LayerNormFusionL1"]
    assert "--disable-optimizer LayerNormFusionL1" in report["command"]
    assert check(model, *flags, "--config", report["written"])[0] == 0
    measured("LayerNormFusion", report)


def test_a_passing_check_needs_no_fix(tmp_path):
    """Healthy twin: the same LayerNorm on rows near zero passes, and fix
    says so without searching (exit 0, nothing written)."""
    model = fix_models.decomposed_layernorm(tmp_path / "ln.onnx")
    rows = fix_models.offset_rows(tmp_path / "rows.npz", mean=0, std=1)
    code, text, report = fix(tmp_path, model, "--inputs", rows, "--mode", "fixed", "--atol", "1e-4", "--rtol", "1e-4")
    assert code == 0, text
    assert "nothing to fix" in text
    assert report["needed"] is False and report["search"]["runs"] == 0 and report["written"] is None
    assert not [p for p in (tmp_path / "out").iterdir() if p.name != ".parity-output"]


def test_nothing_within_the_budget_says_what_was_tried(tmp_path):
    m = fix_models.overflowing_fp16(tmp_path, gain=1e6)
    inputs = quant_models.classifier_samples(tmp_path / "in.npz", n=4, shape=(1, 3, 32, 32))
    code, text, report = fix(tmp_path, m["fp16"], "--reference-model", m["float"], "--inputs", inputs, "--budget", "2")
    assert code == 1, text
    assert not report["found"] and report["search"]["budget_spent"]
    assert [p["change"] for p in report["search"]["probes"]] == [["/hot/Conv"], ["/hot/Conv", "/Relu"]]
    assert "no change passed within the budget of 2 checks" in text and "tried [seed] /hot/Conv: fail" in text


def test_an_int8_fix_without_calibration_samples_is_refused_in_one_line(tmp_path):
    m = fix_models.clipped_int8(tmp_path)
    code, text, _ = fix(tmp_path, m["clipped"], "--reference-model", m["float"])
    assert code == 2, text
    assert text.strip().splitlines()[-1].startswith("parity: error: fix: an int8 copy is re-quantized"), text


def test_an_ep_this_runtime_lacks_stops_at_the_first_check_in_one_line(tmp_path):
    """The EP-options search (use_tf32=0, OpenVINO's f32 hint) needs the EP:
    on a CPU-only ORT, fix says the EP is not available (exit 2) before any
    search, and writes nothing."""
    model = fix_models.decomposed_layernorm(tmp_path / "ln.onnx")
    code, text, report = fix(tmp_path, model, "--providers", "cuda")
    assert code == 2, text
    assert report is None
    assert "execution provider 'cuda'" in text.strip().splitlines()[-1] and "not available" in text, text


def test_when_no_set_of_optimizers_passes_a_lower_level_is_found(tmp_path):
    """resnet18 at `all` against `disable` with no tolerance at all: the
    optimizers the ablation names (NchwcTransformer and the others) switched
    off together still differ by rounding; the level fallback tries
    `extended` (then basic, disable) and finds it bitwise equal."""
    model = quant_models.export_cnn("resnet18", tmp_path / "float.onnx")
    code, text, report = fix(tmp_path, model, "--opt", "all", "--mode", "fixed", "--atol", "0", "--rtol", "0", "--runs", "3")
    assert code == 0, text
    assert report["kind"] == "level" and report["level"] == "extended" and report["verdict_after"] == "PASS", text
    phases = [p["phase"] for p in report["search"]["probes"]]
    assert phases[-1] == "level" and "level" not in phases[:-1], phases
    assert not any(p["passed"] for p in report["search"]["probes"][:-1])
    assert "--opt extended" in report["command"] and report["command"].count("--opt") == 1
    measured("level fallback", report)
