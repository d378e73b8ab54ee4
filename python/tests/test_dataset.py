"""check --dataset (issue 27, docs/dataset.md): a dataset of 2,000 samples
for a torchvision CNN (squeezenet1_1, random weights, 32x32) made in the
test run, judged against the `disable` config, an int8 static-QDQ target
against its float model, and a planted fault (one quantized Conv's weight on
a grid 8x coarser) that flips a minority of samples and is traced to its
node. The Ray engine test (200 samples, a local cluster with 2 actors) is
marked `ray`: Ray's start-up takes tens of seconds here.

Needs torchvision, onnxruntime's quantization tools and the built parity
binary (PARITY_BINARY, else build/parity); skipped otherwise."""

import json
import os
import pty
import subprocess
import sys

import numpy as np
import pytest

torchvision = pytest.importorskip("torchvision")
pytest.importorskip("onnxruntime.quantization")
import quant_models  # noqa: E402

from parity_binary import PARITY, REPO, needs_parity  # noqa: E402
pytestmark = needs_parity

SIZE = 32
SAMPLES_PER_FILE = 100


def export_squeezenet(path):
    import torch
    torch.manual_seed(0)
    model = torchvision.models.squeezenet1_1(weights=None, num_classes=10).eval()
    torch.onnx.export(model, torch.randn(1, 3, SIZE, SIZE), str(path), input_names=["input"],
                      output_names=["logits"], opset_version=17, dynamo=False)
    return path


def write_dataset(folder, files, seed=0):
    """`files` .npz files of SAMPLES_PER_FILE samples each (keys SAMPLE/input)."""
    rng = np.random.default_rng(seed)
    folder.mkdir()
    for f in range(files):
        np.savez(folder / f"part{f:02d}.npz", **{
            f"s{f * SAMPLES_PER_FILE + i:04d}/input": rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)
            for i in range(SAMPLES_PER_FILE)})
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("dataset")
    fp32 = export_squeezenet(d / "float.onnx")
    int8 = quant_models.quantize_qdq(fp32, d / "int8.onnx", {"input": ((1, 3, SIZE, SIZE), np.float32)})
    planted = quant_models.coarsen_weight_scale(int8, d / "bad.onnx", 5, factor=8)
    return {"dir": d, "float": fp32, "int8": int8, "bad": d / "bad.onnx", "planted": planted,
            "data": write_dataset(d / "data", 20), "small": write_dataset(d / "small", 2, seed=1)}


def check(*args, **kw):
    """`parity check ... --dataset ...`: (exit code, stdout, stderr)."""
    r = subprocess.run([PARITY, "check", *map(str, args)], capture_output=True, text=True, **kw)
    return r.returncode, r.stdout, r.stderr


def report(folder):
    with open(folder / "report.json", encoding="utf-8") as f:
        data = json.load(f)
    import jsonschema
    with open(os.path.join(REPO, "docs", "dataset.schema.json"), encoding="utf-8") as f:
        jsonschema.validate(data, json.load(f))
    return data


def test_dataset_against_disable_reports_the_distribution(models):
    out = models["dir"] / "r-disable"
    rc, stdout, stderr = check(models["float"], "--dataset", models["data"], "--report", out)
    assert rc == 0, stdout + stderr
    r = report(out)
    assert r["verdict"] == "PASS" and r["count"] == 2000 and r["skipped"] == 0 and r["engine"] == "local"
    logits = r["outputs"][0]
    assert logits["name"] == "logits" and logits["failed"] == 0
    assert logits["top1_agreement"] == 1.0 and logits["flipped"] == []
    # The quantiles are NumPy's of the per-sample rows.
    per_sample = np.array([s["outputs"]["logits"]["max_abs"] for s in r["samples"]])
    assert len(per_sample) == 2000
    for q, key in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (1.0, "max")):
        assert logits["quantiles"]["max_abs"][key] == pytest.approx(np.quantile(per_sample, q), rel=1e-12, abs=0)
    assert sum(logits["histogram"]["counts"]) == 2000
    assert r["worst"][0]["score"] == max(s["outputs"]["logits"]["score"] for s in r["samples"])
    junit = (out / "junit.xml").read_text()
    assert junit.count("<testcase ") == 1 and 'name="logits"' in junit and "<failure" not in junit
    html = (out / "report.html").read_text()
    assert 'data-chart="histogram"' in html and "2000 samples" in html
    assert "samples/s" not in stderr  # stderr is no terminal: no progress line


def test_int8_target_reports_agreement_flips_and_ranking(models):
    out = models["dir"] / "r-int8"
    rc, stdout, stderr = check(models["int8"], "--reference-model", models["float"], "--dataset", models["data"],
                               "--report", out)
    assert rc == 1, stdout + stderr  # out of float32's tolerance: a FAIL, as check's
    r = report(out)
    logits = r["outputs"][0]
    flipped = [s["id"] for s in r["samples"] if s["outputs"]["logits"]["flipped"]]
    assert 0 < len(flipped) < 1000 and logits["flipped"] == flipped
    assert logits["top1_agreement"] == pytest.approx(1 - len(flipped) / 2000)
    assert logits["quantiles"]["snr_db"]["p50"] > 10  # int8 is close, not equal
    located = r["locate"]["samples"]
    assert r["locate"]["worst_k"] == 3 and sum(s["worst"] for s in located) == 3
    assert sum(s["flipped"] for s in located) == min(len(flipped), r["locate"]["flip_cap"])
    assert r["ranking"] and r["ranking"][0]["samples"] >= 1
    assert r["headline"] in stdout and "located flips first diverge at" in r["headline"]
    assert "top-1 agreement" in stdout


def test_planted_fault_flips_a_minority_traced_to_its_node(models):
    out = models["dir"] / "r-bad"
    rc, stdout, stderr = check(models["bad"], "--reference-model", models["int8"], "--dataset", models["data"],
                               "--report", out)
    assert rc == 1, stdout + stderr
    r = report(out)
    flipped = r["outputs"][0]["flipped"]
    assert 0 < len(flipped) < 500, len(flipped)  # a minority of the 2,000
    # The planted Conv ('/features/features.4/expand1x1/Conv'): its weight's
    # DequantizeLinear is where every located flip first departs.
    module = models["planted"].split("/")[2:4]  # ['features.4', 'expand1x1']
    top = r["ranking"][0]
    assert ".".join(module) in top["fused_node"] or "/".join(module) in (top["node"] or ""), top
    flips_located = sum(s["flipped"] for s in r["locate"]["samples"] if s["first_divergence"])
    assert top["flips"] == flips_located > 0
    assert r["headline"].startswith(f"{flips_located} of {flips_located} located flips")
    # By PyTorch module: the DequantizeLinear records none; the Conv reading its output does.
    assert r["module_ranking"][0]["module"] == ".".join(module) and r["module_ranking"][0]["flips"] == flips_located
    assert r["module_headline"] == f"{flips_located} of {flips_located} located flips first diverge in module " \
        + ".".join(module) and r["module_headline"] in stdout


def test_bad_sample_fails_by_default_and_is_skipped_on_request(models, tmp_path):
    data = tmp_path / "mixed"
    data.mkdir()
    rng = np.random.default_rng(3)
    for i in range(4):
        np.save(data / f"ok{i}.npy", rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32))
    np.save(data / "wrong_shape.npy", np.zeros((1, 3, 7), np.float32))
    (data / "broken.npz").write_bytes(b"not a zip")
    rc, stdout, stderr = check(models["float"], "--dataset", data)
    assert rc == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and "sample 'broken'" in stderr, stderr
    out = tmp_path / "r"
    rc, stdout, stderr = check(models["float"], "--dataset", data, "--on-bad-sample", "skip", "--report", out)
    assert rc == 0, stdout + stderr
    r = report(out)
    assert r["count"] == 4 and r["skipped"] == 2
    assert sorted(b["id"] for b in r["bad_samples"]) == ["broken", "wrong_shape"]
    assert "2 bad samples skipped" in stdout


def test_glob_and_per_sample_folders_are_datasets(models, tmp_path):
    rng = np.random.default_rng(4)
    folders = tmp_path / "folders"
    for i in range(3):
        (folders / f"case{i}").mkdir(parents=True)
        np.save(folders / f"case{i}" / "input.npy", rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32))
    rc, stdout, _ = check(models["float"], "--dataset", folders, "--json", tmp_path / "f.json")
    assert rc == 0 and json.loads((tmp_path / "f.json").read_text())["count"] == 3
    rc, stdout, _ = check(models["float"], "--dataset", str(models["data"] / "part0[0-1].npz"), "--json",
                          tmp_path / "g.json")
    g = json.loads((tmp_path / "g.json").read_text())
    assert rc == 0 and g["count"] == 200 and g["samples"][0]["id"] == "part00/s0000"
    rc, _, stderr = check(models["float"], "--dataset", str(tmp_path / "nothing*.npz"))
    assert rc == 2 and "no sample files match" in stderr


def test_progress_line_on_a_terminal(models):
    master, slave = pty.openpty()
    r = subprocess.run([PARITY, "check", str(models["float"]), "--dataset", str(models["small"])],
                       stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    seen = b""
    try:
        while chunk := os.read(master, 65536):
            seen += chunk
    except OSError:
        pass
    os.close(master)
    assert r.returncode == 0 and b"samples/s" in seen and b"ETA" in seen, seen[-300:]


@pytest.mark.ray
def test_ray_engine_agrees_with_the_local_engine_bit_for_bit(models, tmp_path):
    pytest.importorskip("ray")
    env = dict(os.environ, PARITY_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), os.environ.get("PYTHONPATH", "")]))
    rc, stdout, stderr = check(models["int8"], "--reference-model", models["float"], "--dataset", models["small"],
                               "--engine", "ray", "--ray-actors", "2", "--json", tmp_path / "ray.json", env=env)
    assert rc == 1, stdout + stderr
    rc, stdout, _ = check(models["int8"], "--reference-model", models["float"], "--dataset", models["small"],
                          "--json", tmp_path / "local.json")
    ray, local = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("ray", "local"))
    assert ray["engine"] == "ray" and local["engine"] == "local" and ray["count"] == 200
    assert ray["samples"] == local["samples"]  # every metric of every sample, exactly
    for key in ("outputs", "worst", "ranking", "headline", "locate"):
        assert ray[key] == local[key], key


def _wheel_ort():
    """The venv's onnxruntime wheel's library (another ORT release than the bundled one), or None."""
    try:
        import onnxruntime
    except ImportError:
        return None
    capi = os.path.join(os.path.dirname(onnxruntime.__file__), "capi")
    libs = sorted(f for f in os.listdir(capi) if f.startswith("libonnxruntime.so."))
    return os.path.realpath(os.path.join(capi, libs[0])) if libs else None


@pytest.mark.ray
def test_a_dataset_across_two_ort_releases_is_the_same_on_both_engines(models, tmp_path):
    """--reference-ort-library with --dataset (issue 55): the reference runs on the wheel's ORT in a
    child process of each actor (or of the local engine), the target on the bundled one; both engines
    give the same numbers, and the report names the reference's runtime."""
    pytest.importorskip("ray")
    wheel = _wheel_ort()
    if wheel is None:
        pytest.skip("no onnxruntime wheel in the venv")
    env = dict(os.environ, PARITY_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), os.environ.get("PYTHONPATH", "")]))
    env.pop("PARITY_ORT_LIBRARY", None)
    results = {}
    for engine in ("local", "ray"):
        rc, stdout, stderr = check(models["int8"], "--dataset", models["small"], "--reference-ort-library", wheel,
                                   "--engine", engine, "--ray-actors", "2", "--json", tmp_path / f"{engine}.json",
                                   env=env)
        assert rc in (0, 1), stdout + stderr
        results[engine] = (rc, json.loads((tmp_path / f"{engine}.json").read_text()))
    (rc_local, local), (rc_ray, ray) = results["local"], results["ray"]
    assert rc_local == rc_ray and local["count"] == ray["count"] == 200
    assert wheel in local["reference"] and wheel in ray["reference"], local["reference"]
    assert ray["samples"] == local["samples"]
    for key in ("outputs", "worst", "headline"):
        assert ray[key] == local[key], key


def _package():
    try:
        import parity
        from parity import _core  # noqa: F401  (the compiled extension: parity.check needs the package)
        return parity
    except ImportError:
        if os.environ.get("PARITY_REQUIRE_PACKAGE"):
            raise
        pytest.skip("parity.check needs the built package (make python-package)")


def _samples(n, seed):
    rng = np.random.default_rng(seed)
    return [{"input": rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)} for _ in range(n)]


def test_python_check_takes_an_iterable_of_dicts(models):
    parity = _package()
    report = parity.check(models["int8"], reference_model=models["float"], dataset=iter(_samples(50, 5)))
    assert report.kind == "dataset" and report.data["count"] == 50 and not report.passed
    assert report.data["samples"][0]["id"] == "sample000000"
    with pytest.raises(ValueError, match="no samples"):
        parity.check(models["float"], dataset=[])


@pytest.mark.ray
def test_python_check_takes_a_ray_dataset_on_the_ray_engine(models):
    parity = _package()
    ray = pytest.importorskip("ray")
    samples = _samples(40, 6)
    local = parity.check(models["int8"], reference_model=models["float"], dataset=samples)
    on_ray = parity.check(models["int8"], reference_model=models["float"], engine="ray", ray_actors=2,
                          dataset=ray.data.from_items(samples))
    assert on_ray.data["engine"] == "ray" and on_ray.data["count"] == 40
    assert on_ray.data["samples"] == local.data["samples"]
