"""The Python API (parity.compare/run/check/locate, the `parity` command)
against the CLI's JSON for the same inputs.

What is independent and what is not, plainly:
- compare: `parity.compare` runs the C++ kernel in this process (parity._core,
  arrays read in place), the CLI runs it in the binary on .npz files: two
  bindings, two input paths. test_compare_matches_numpy_computed_metrics
  checks the numbers against NumPy itself, which shares no code with parity.
- run, check, locate: the API execs the same binary with --json, so comparing
  it with the CLI tests argument passing and the wrapping of the report, not
  the numbers. Their numbers are pinned independently where a ground truth
  exists: the demo's planted fault is in /layer2/1/conv2/Conv, so the top
  culprit (compared field by field, culprits included) must cover it.

Needs the installed package (`pip install .`); skipped otherwise, with that
reason. The CLI is the binary installed inside the package (parity.binary()).
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

try:
    import parity
    from parity import _core  # noqa: F401  (the compiled extension)
except ImportError as e:  # python/ on sys.path without a build: the source tree only
    if os.environ.get("PARITY_REQUIRE_PACKAGE"):  # make test builds it first: its absence is a failure
        raise
    pytest.skip(f"the parity package is not installed (pip install .): {e}", allow_module_level=True)

# Timing and host facts differ from run to run; every other field must agree.
VOLATILE = {"env", "performance", "latency", "seconds", "session_creation_ms", "samples_ms", "peak_rss_bytes",
            "mean_ms", "min_ms", "max_ms", "p50_ms", "p95_ms", "p99_ms", "tool", "path", "repro"}
PLANTED_NODE = "/layer2/1/conv2/Conv"  # src/cli/cmd_demo.cc: kPlantedNode (weights x1.02)


def strip(j):
    if isinstance(j, dict):
        return {k: strip(v) for k, v in j.items()
                if k not in VOLATILE and not k.endswith("_ms") and not k.startswith("latency")}
    if isinstance(j, list):
        return [strip(v) for v in j]
    return j


def cli(*args, check_rc=(0, 1)):
    p = subprocess.run([parity.binary(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    assert p.returncode in check_rc, p.stderr
    return p


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The CLI's built-in models: conv_bn_relu, residual_cnn and its planted twin."""
    out = tmp_path_factory.mktemp("demo")
    cli("demo", "--out", out / "r")
    return out / "r" / "models"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two .npz tensor sets with float32/float16/float64/int/bool tensors, NaN and Inf."""
    d = tmp_path_factory.mktemp("pair")
    rng = np.random.default_rng(7)
    ref = {
        "logits": rng.standard_normal((4, 1000)).astype(np.float32),
        "half": rng.standard_normal((3, 5)).astype(np.float16),
        "dbl": rng.standard_normal(17),
        "ids": rng.integers(0, 9, (2, 6)).astype(np.int64),
        "mask": rng.random(11) > 0.5,
    }
    test = {k: v.copy() for k, v in ref.items()}
    test["logits"] += rng.standard_normal((4, 1000)).astype(np.float32) * 1e-3
    test["logits"][0, 3] = np.nan
    test["logits"][1, 2] = np.inf
    test["half"][1, 1] += np.float16(0.5)
    test["dbl"] *= 1 + 1e-9
    test["ids"][1, 1] += 1
    np.savez(d / "ref.npz", **ref)
    np.savez(d / "test.npz", **test)
    return d, ref, test


def tensors_by_name(j):
    return {t["name"]: t for t in j["tensors"]}


@pytest.mark.parametrize("flags,kwargs", [
    ([], {}),
    (["--atol", "1e-3", "--rtol", "0"], {"atol": 1e-3, "rtol": 0.0}),
    (["--mode", "adaptive"], {"mode": "adaptive"}),
    (["--mode", "fixed", "--by", "max"], {"tolerance": {"mode": "fixed", "decide_by": "max"}}),
])
def test_compare_matches_cli_json(pair, tmp_path, flags, kwargs):
    d, ref, test = pair
    out = tmp_path / "c.json"
    p = cli("compare", d / "ref.npz", d / "test.npz", "--json", out, *flags)
    want = json.loads(out.read_text())
    for got in (parity.compare(ref, test, **kwargs), parity.compare(d / "ref.npz", d / "test.npz", **kwargs)):
        assert got.passed == want["passed"] == (p.returncode == 0)
        assert tensors_by_name(got.data) == tensors_by_name(want)
        assert got.findings == want["findings"]
        assert got.data["policy"] == want["policy"]
    assert not got.passed and set(got.failed) >= {"logits", "ids"}
    assert got["logits"].nan_test == 1 and got["logits"].inf_test == 1


def test_compare_matches_numpy_computed_metrics():
    rng = np.random.default_rng(3)
    ref = rng.standard_normal((8, 257)).astype(np.float32)
    test = ref + (rng.standard_normal(ref.shape) * 1e-4).astype(np.float32)
    atol, rtol = 1e-3, 1e-2
    healthy = parity.compare(ref, test, atol=atol, rtol=rtol)
    d = np.abs(test.astype(np.float64) - ref.astype(np.float64))
    assert healthy.passed and healthy.metrics["mismatches"] == 0
    assert healthy.metrics["max_abs"] == pytest.approx(d.max(), rel=1e-6)
    test.flat[[5, 900, 2000]] += np.float32([0.5, -0.25, 0.125])  # three elements far outside the band
    d = np.abs(test.astype(np.float64) - ref.astype(np.float64))
    got = parity.compare(ref, test, atol=atol, rtol=rtol)
    m = got.metrics
    assert not got.passed and len(got.failed) == 1
    assert m["count"] == ref.size
    assert m["mismatches"] == int((~np.isclose(test, ref, rtol=rtol, atol=atol, equal_nan=True)).sum()) == 3
    assert m["max_abs"] == pytest.approx(d.max(), rel=1e-6)
    assert list(m["max_abs_index"]) == list(np.unravel_index(int(d.argmax()), ref.shape)) == [0, 5]
    assert m["ref_at_max"] == pytest.approx(float(ref.flat[5]))
    assert m["test_at_max"] == pytest.approx(float(test.flat[5]))


def test_compare_two_arrays_any_names_and_npy(tmp_path):
    a = np.linspace(-1, 1, 101, dtype=np.float32)
    b = a + np.float32(2e-5)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    cli("compare", tmp_path / "a.npy", tmp_path / "b.npy", "--json", tmp_path / "c.json")
    want = json.loads((tmp_path / "c.json").read_text())["tensors"][0]
    got = parity.compare(a, b)
    assert got.metrics == want["metrics"]
    assert got.tensors[0].tolerance == want["tolerance"]
    assert parity.compare(tmp_path / "a.npy", tmp_path / "b.npy").metrics == want["metrics"]


def test_compare_reads_arrays_in_place_without_copy():
    # 2 x 64 MiB: a copy of either input would raise the peak RSS by >= 64 MiB.
    code = (
        "import resource, numpy as np, parity\n"
        "n = 16 * 1024 * 1024\n"
        "a = np.ones(n, np.float32); b = np.full(n, 1.00001, np.float32)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = parity.compare(a, b)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "assert r.metrics['count'] == n\n"
        "print((after - before) * 1024)\n")
    grew = int(subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE,
                              text=True).stdout.split()[-1])
    assert grew < 16 * 2**20, f"peak RSS grew by {grew} bytes: an input was copied"


def test_compare_strided_view_is_made_contiguous():
    a = np.arange(20, dtype=np.float32)
    r = parity.compare(a[::2], a[::2] + 1)
    assert r.metrics["count"] == 10 and r.metrics["max_abs"] == 1.0


def test_compare_errors_carry_the_cli_message(pair, tmp_path):
    d, ref, test = pair
    (tmp_path / "tol.json").write_text('{"mode": "bogus"}')
    p = cli("compare", d / "ref.npz", d / "test.npz", "--tolerance", tmp_path / "tol.json", check_rc=(2,))
    with pytest.raises(parity.ParityError) as e:
        parity.compare(ref, test, tolerance={"mode": "bogus"})
    line = p.stderr.strip().splitlines()[-1]
    assert line.endswith(str(e.value)), (line, str(e.value))
    assert "\n" not in str(e.value)
    with pytest.raises(parity.ParityError, match="unsupported array dtype"):
        parity.compare(np.zeros(3, np.complex64), np.zeros(3, np.complex64))


def test_run_matches_cli_outputs(demo, tmp_path):
    model = demo / "conv_bn_relu.onnx"
    cli("inputs", model, "-o", tmp_path / "in.npz", "--kind", "typical")
    cli("run", model, "--inputs", tmp_path / "in.npz", "-o", tmp_path / "out.npz", "--opt", "all")
    with np.load(tmp_path / "in.npz") as z:
        inputs = {k.split("/", 1)[-1]: z[k] for k in z.files}
    with np.load(tmp_path / "out.npz") as z:
        want = {k: z[k] for k in z.files}
    assert list(want) == ["typical/output"]  # the CLI files outputs under the sample's name
    for got in (parity.run(model, tmp_path / "in.npz", "all"), parity.run(model, {"typical/" + k: v for k, v in
                                                                               inputs.items()}, "all")):
        assert set(got) == set(want)
        for k in want:
            np.testing.assert_array_equal(got[k], want[k])
    one = parity.run(model, inputs, {"opt": "disable", "intra_op_threads": 1})  # one sample: plain names
    assert list(one) == ["output"] and one["output"].shape == want["typical/output"].shape


def test_run_bad_input_raises_the_cli_line(demo, tmp_path):
    p = cli("run", demo / "conv_bn_relu.onnx", "--inputs", tmp_path / "missing.npz", "-o", tmp_path / "o.npz",
            check_rc=(2,))
    with pytest.raises(parity.ParityError) as e:
        parity.run(demo / "conv_bn_relu.onnx", tmp_path / "missing.npz")
    assert p.stderr.strip().splitlines()[-1] == "parity: error: " + str(e.value)


def test_check_matches_cli_json(demo, tmp_path):
    planted, healthy = demo / "residual_cnn_planted.onnx", demo / "residual_cnn.onnx"
    cli("check", planted, "--reference-model", healthy, "--runs", "2", "--json", tmp_path / "c.json")
    want = json.loads((tmp_path / "c.json").read_text())
    got = parity.check(planted, reference_model=healthy, runs=2)
    assert not got.passed and got.data["overall_status"] == want["overall_status"] == "FAIL"
    assert got.failed_tests == want["failed_tests"]
    assert strip(got.data["samples"]) == strip(want["samples"])
    assert got.first_divergence == want["locate"]["first_divergence"]
    assert strip(got.data["locate"]["culprits"]) == strip(want["locate"]["culprits"])
    assert PLANTED_NODE in got.data["locate"]["culprits"][0]["covers"]
    html = got.save_html(str(tmp_path / "r.html"))
    assert open(html).read().lstrip().lower().startswith("<!doctype html")
    assert json.loads(got.to_json())["schema"] == "parity.check/1"
    ok = parity.check(demo / "conv_bn_relu.onnx", runs=2)
    assert ok.passed and ok.failed_tests == [] and ok.first_divergence is None


def test_locate_matches_cli_json(demo, tmp_path):
    healthy, planted = demo / "residual_cnn.onnx", demo / "residual_cnn_planted.onnx"
    cli("locate", healthy, "--target-model", planted, "--json", tmp_path / "l.json")
    want = json.loads((tmp_path / "l.json").read_text())
    got = parity.locate(healthy, target_model=planted)
    assert got.data["schema"] == "parity.locate/1" and not got.passed
    assert got.first_divergence == want["first_divergence"]
    assert strip(got.data["tensors"]) == strip(want["tensors"])
    assert strip(got.data["culprits"]) == strip(want["culprits"])
    assert got.data["culprits"] and PLANTED_NODE in got.data["culprits"][0]["covers"]


def _console_script():
    # Beside the interpreter (a venv's bin/), or the bin/ of a `pip install --target DIR` (make python-package).
    exe = shutil.which("parity", path=os.path.dirname(sys.executable))
    target_bin = os.path.join(os.path.dirname(os.path.dirname(parity.__file__)), "bin", "parity")
    return exe or (target_bin if os.access(target_bin, os.X_OK) else None)


def test_console_script_is_the_cli():
    exe = _console_script()
    if exe is None:
        if os.environ.get("PARITY_REQUIRE_PACKAGE"):
            pytest.fail("no `parity` console script beside this Python nor in the --target folder's bin/")
        pytest.skip("no `parity` script beside this Python (installed with --user or elsewhere)")
    out = subprocess.run([exe, "--version"], check=True, stdout=subprocess.PIPE, text=True).stdout
    assert out.strip() == f"parity {parity.__version__}"
    bad = subprocess.run([exe, "run"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("parity: error:")


def test_help_shows_docstrings():
    for f in (parity.compare, parity.run, parity.check, parity.locate):
        assert f.__doc__ and len(f.__doc__) > 200
    assert "assert_export_matches" in parity.testing.__doc__ or parity.testing.assert_export_matches.__doc__
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    import importlib
    assert importlib.import_module("parity.torch").dump.__module__ == "parity.torch.dumper"
