"""Every size against PyTorch (issue 28), end to end with the README's flow:
`python -m parity.torch dump ... --export --dynamic` then `parity check --torch`.

zoo.models.GridDecoder(baked=True) divides by `float(images.shape[3])`: the
TorchScript exporter turns that into the traced width (and warns with a
TracerWarning), so the export is right at the traced width only. The dump
holds other sizes on every dynamic axis; check must fail at the other widths
and name them, and pass the healthy export (baked=False) at every size.

Needs onnx and the built parity binary (PARITY_BINARY, else build/parity)."""

import json
import os
import subprocess

from conftest import load_manifest, run_module
from parity_binary import PARITY, needs_parity

DYNAMIC = ["--dynamic", "images:0:batch", "--dynamic", "images:2:height", "--dynamic", "images:3:width"]


def dump(tmp, baked, *extra):
    d, m = os.path.join(tmp, f"dump_{baked}"), os.path.join(tmp, f"m_{baked}.onnx")
    r = run_module("parity.torch", "dump", "zoo.models:GridDecoder", "--kwargs", json.dumps({"baked": baked}),
                   "--output-names", "boxes", "-o", d, "--export", m, "--exporter", "torchscript",
                   *DYNAMIC, *extra)
    assert r.returncode == 0, r.stderr
    return d, m, r


def check(model, *dumps):
    report = model + ".report.json"
    argv = [PARITY, "check", model, "--runs", "1", "--warmup", "0", "--json", report]
    for d in dumps:
        argv += ["--torch", d]
    r = subprocess.run(argv, capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    with open(report, encoding="utf-8") as f:
        return r, json.load(f)


def findings(report, prefix):
    return {f["id"]: f for s in report["stages"].values() for f in s["findings"] if f["id"].startswith(prefix)}


def test_dump_holds_other_sizes_and_the_tracer_warning(tmp_path):
    d, _, r = dump(str(tmp_path), True)
    m = load_manifest(d)
    names = [s["name"] for s in m["sizes"]]
    assert names == ["batch2", "height16", "height64", "width32", "width128"]
    shapes = {s["name"]: s["input_details"][0]["shape"] for s in m["sizes"]}
    assert shapes["batch2"] == [2, 3, 32, 64] and shapes["width128"] == [1, 3, 32, 128]
    for s in m["sizes"]:
        assert list(s["outputs"]) == ["boxes"] == list(s["outputs_fp64"])
        for rel in [*s["inputs"].values(), *s["outputs"].values(), *s["outputs_fp64"].values()]:
            assert os.path.isfile(os.path.join(d, rel)), rel
    assert m["layers"], "the traced sample keeps its layers"
    warned = m["export"]["tracer_warnings"]
    assert len(warned) == 1 and "models.py" in warned[0] and "Python float" in warned[0]
    assert "the trace may be wrong for other shapes" in r.stdout


def test_sizes_option_replaces_the_default_sizes_and_none_keeps_one(tmp_path):
    d, _, _ = dump(str(tmp_path), False, "--sizes", "images=3x3x16x48")
    assert [s["input_details"][0]["shape"] for s in load_manifest(d)["sizes"]] == [[3, 3, 16, 48]]
    d2 = os.path.join(str(tmp_path), "none")
    r = run_module("parity.torch", "dump", "zoo.models:GridDecoder", "-o", d2, "--sizes", "none",
                   "--export", os.path.join(str(tmp_path), "n.onnx"), *DYNAMIC)
    assert r.returncode == 0, r.stderr
    assert load_manifest(d2).get("sizes", []) == []
    bad = run_module("parity.torch", "dump", "zoo.models:GridDecoder", "-o", os.path.join(str(tmp_path), "b"),
                     "--sizes", "pixels=1x3x8x8")
    assert bad.returncode == 2 and "no input 'pixels'" in bad.stderr


def test_dump_refuses_to_replace_a_dump_without_force(tmp_path):
    d, m, _ = dump(str(tmp_path), False, "--sizes", "none")
    before = load_manifest(d)
    again = run_module("parity.torch", "dump", "zoo.models:GridDecoder", "-o", d, "--seed", "5")
    assert again.returncode == 2
    assert "already holds a dump" in again.stderr and "--force" in again.stderr
    assert load_manifest(d) == before
    forced = run_module("parity.torch", "dump", "zoo.models:GridDecoder", "-o", d, "--seed", "5", "--force")
    assert forced.returncode == 0, forced.stderr
    assert load_manifest(d)["seed"] == 5


@needs_parity
def test_baked_width_fails_check_at_the_other_widths_and_names_them(tmp_path):
    d, m, _ = dump(str(tmp_path), True)
    r, report = check(m, d)
    assert r.returncode == 1, r.stdout
    assert report["overall_status"] == "FAIL"
    sizes = findings(report, "numerics.torch.sizes")["numerics.torch.sizes"]
    assert sizes["status"] == "FAIL"
    assert "departs from PyTorch at 2 of 6 sizes" in sizes["message"]
    assert "torch:width32" in sizes["message"] and "torch:width128" in sizes["message"]
    assert findings(report, "numerics.torch.width32.boxes")["numerics.torch.width32.boxes"]["status"] == "FAIL"
    assert findings(report, "numerics.torch.batch2.boxes")["numerics.torch.batch2.boxes"]["status"] == "PASS"
    assert findings(report, "numerics.torch.boxes")["numerics.torch.boxes"]["status"] == "PASS"
    assert any("the trace may be wrong for other shapes" in n for n in report["notes"])
    assert "the trace may be wrong for other shapes" in r.stdout
    assert "numerics.torch.sizes" in r.stdout


@needs_parity
def test_healthy_export_passes_at_every_size(tmp_path):
    d, m, _ = dump(str(tmp_path), False)
    r, report = check(m, d)
    assert r.returncode == 0, r.stdout
    sizes = findings(report, "numerics.torch.sizes")["numerics.torch.sizes"]
    assert sizes["status"] == "PASS" and "every dumped size (6)" in sizes["message"]
    torch_samples = [s["name"] for s in report["samples"] if s["name"].startswith("torch")]
    assert len(torch_samples) == 6
    assert not report["notes"]


@needs_parity
def test_torch_takes_several_dumps_and_an_old_one_sample_dump(tmp_path):
    tmp = str(tmp_path)
    d, m, _ = dump(tmp, False, "--sizes", "none")
    # A dump made before `sizes` existed: no "sizes" key at all.
    manifest = load_manifest(d)
    manifest.pop("sizes", None)
    assert "sizes" not in manifest
    with open(os.path.join(d, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f)
    r, report = check(m, d)
    assert r.returncode == 0, r.stdout
    assert "numerics.torch.sizes" not in findings(report, "numerics.torch")
    other = os.path.join(tmp, "other")
    r2 = run_module("parity.torch", "dump", "zoo.models:GridDecoder", "--kwargs", '{"baked": false}',
                    "--input", "images=2x3x16x96", "--output-names", "boxes", "-o", other)
    assert r2.returncode == 0, r2.stderr
    r, report = check(m, d, other)
    assert r.returncode == 0, r.stdout
    assert report["config"]["torch_more"] == [other]
    assert "torch2" in [s["name"] for s in report["samples"]]
    assert findings(report, "numerics.torch.sizes")["numerics.torch.sizes"]["status"] == "PASS"
