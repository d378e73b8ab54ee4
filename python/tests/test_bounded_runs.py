"""Bounded runs (issue 41 item 3, docs/inputs.md "Bounded runs"): a TorchScript
model whose Loop runs `n` times, `n` an int64 input.

Before, the generated `boundary_dtype_max` sample set `n` to INT64_MAX and a
default `parity check` never ended. Now `n` is a count: the generated samples
give it small values (typical 1-8, boundary 0 and a modest max), and every run
of a sample has a time limit; a sample that passes it is reported TIMEOUT,
never PASS.

Needs torch, onnx and the built parity binary (PARITY_BINARY, else build/parity)."""

import json
import os
import subprocess
import time

import numpy as np
import pytest

from parity_binary import PARITY, needs_parity

pytestmark = needs_parity
torch = pytest.importorskip("torch")


class CountLoop(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(int(n)):
            y = y * 0.5 + 1.0
        return y


def export_loop(path):
    scripted = torch.jit.script(CountLoop())
    torch.onnx.export(scripted, (torch.randn(2, 3), torch.tensor(3, dtype=torch.int64)), path,
                      input_names=["x", "n"], output_names=["y"], dynamo=False, opset_version=17)
    import onnx
    ops = [node.op_type for node in onnx.load(path).graph.node]
    assert "Loop" in ops, ops  # the trip count is the input itself
    return path


def check(model, tmp, *extra, limit=120):
    report = os.path.join(tmp, "report.json")
    start = time.monotonic()
    r = subprocess.run([PARITY, "check", model, "--runs", "1", "--warmup", "0", "--json", report, *extra],
                       capture_output=True, text=True, timeout=limit)
    seconds = time.monotonic() - start
    assert r.returncode in (0, 1), r.stdout + r.stderr
    with open(report, encoding="utf-8") as f:
        return r, json.load(f), seconds


def test_default_check_of_a_loop_with_an_int64_trip_count_ends_with_small_counts(tmp_path):
    model = export_loop(str(tmp_path / "loop.onnx"))
    r, report, seconds = check(model, str(tmp_path))
    assert seconds < 60, f"the default check took {seconds:.1f} s"
    assert r.returncode == 0, r.stdout
    names = [s["name"] for s in report["samples"]]
    # `n` is a count: no dtype-max sample, a count-max one instead.
    assert "boundary_dtype_max" not in names
    assert "boundary_count_max" in names
    samples = {s["name"]: s for s in report["samples"]}
    assert all(s["status"] != "TIMEOUT" for s in report["samples"]), names
    assert samples["boundary_count_max"]["status"] == "PASS", samples["boundary_count_max"]
    # The trip counts the generator chose, read back with `parity inputs`.
    npz = tmp_path / "samples.npz"
    gen = subprocess.run([PARITY, "inputs", model, "-o", str(npz)], capture_output=True, text=True)
    assert gen.returncode == 0, gen.stderr
    counts = {k: int(v) for k, v in np.load(npz).items() if k.endswith("/n")}
    assert counts, list(np.load(npz).keys())
    assert max(counts.values()) <= 64, counts
    assert counts["boundary_zeros/n"] == 0 and counts["boundary_count_max/n"] == 64, counts
    assert 1 <= counts["typical/n"] <= 8, counts


def test_a_sample_past_the_time_limit_is_reported_timeout_never_pass(tmp_path):
    model = export_loop(str(tmp_path / "loop.onnx"))
    inputs = tmp_path / "inputs.npz"
    x = np.ones((2, 3), np.float32)
    np.savez(inputs, **{"few/x": x, "few/n": np.array(3, np.int64),
                        "many/x": x, "many/n": np.array(10**12, np.int64)})  # hours of iterations
    r, report, seconds = check(model, str(tmp_path), "--inputs", str(inputs), "--sample-timeout", "2")
    assert seconds < 60, f"the check took {seconds:.1f} s with a 2 s limit per sample"
    samples = {s["name"]: s for s in report["samples"]}
    assert samples["many"]["status"] == "TIMEOUT", samples["many"]
    assert "time limit" in samples["many"]["error"], samples["many"]
    assert samples["few"]["status"] == "PASS", samples["few"]
    # The user's own sample could not be judged: the check does not pass.
    assert report["overall_status"] == "FAIL" and r.returncode == 1
    failed = [t for t in report["failed_tests"] if "many" in t["id"]]
    assert failed and "TIMEOUT" in failed[0]["reason"], report["failed_tests"]


def test_sample_timeout_zero_is_no_limit_and_a_bad_value_is_refused(tmp_path):
    model = export_loop(str(tmp_path / "loop.onnx"))
    r, report, _ = check(model, str(tmp_path), "--sample-timeout", "0")
    assert r.returncode == 0 and all(s["status"] != "TIMEOUT" for s in report["samples"])
    bad = subprocess.run([PARITY, "check", model, "--sample-timeout", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2, bad.stderr


# Issue 56 class 3 / issue 51 item 1: one deadline per sample in every stage.
# The sample past its limit given FIRST in --inputs used to be the passing
# check's layer-curve sample, re-run there without the limit (a hang that
# reached 9.2 GB), with or without --no-locate.
@pytest.mark.parametrize("extra", [[], ["--no-locate"]])
def test_a_sample_past_its_limit_given_first_is_never_run_again(tmp_path, extra):
    model = export_loop(str(tmp_path / "loop.onnx"))
    inputs = tmp_path / "inputs.npz"
    x = np.ones((2, 3), np.float32)
    np.savez(inputs, **{"many/x": x, "many/n": np.array(10**12, np.int64),
                        "few/x": x, "few/n": np.array(3, np.int64)})
    r, report, seconds = check(model, str(tmp_path), "--inputs", str(inputs), "--sample-timeout", "2", *extra)
    assert seconds < 30, f"the check took {seconds:.1f} s with a 2 s limit per sample"
    samples = {s["name"]: s for s in report["samples"]}
    assert samples["many"]["status"] == "TIMEOUT", samples["many"]
    assert samples["few"]["status"] == "PASS", samples["few"]
    assert sum(s["name"] == "many" for s in report["samples"]) == 1  # reported once
    assert report["overall_status"] == "FAIL" and r.returncode == 1


def export_memory_model(path):
    """y = sum((ConstantOfShape([|int(x)|, 1000]) + x)^2): a run's memory grows
    with the value of x, as a model whose shapes come from its inputs does."""
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper
    nodes = [
        h.make_node("Cast", ["x"], ["xi"], to=T.INT64),
        h.make_node("Abs", ["xi"], ["n"]),
        h.make_node("Concat", ["n", "k"], ["shape"], axis=0),
        h.make_node("ConstantOfShape", ["shape"], ["z"], value=h.make_tensor("v", T.FLOAT, [1], [1.0])),
        h.make_node("Add", ["z", "x"], ["z2"]),
        h.make_node("Mul", ["z2", "z2"], ["z3"]),
        h.make_node("ReduceSum", ["z3"], ["y"], keepdims=0),
    ]
    graph = h.make_graph(nodes, "grows", [h.make_tensor_value_info("x", T.FLOAT, [1])],
                         [h.make_tensor_value_info("y", T.FLOAT, [])],
                         initializer=[numpy_helper.from_array(np.array([1000], np.int64), "k")])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


# Issue 56 class 12: a sample whose run needs more memory than its budget is
# reported OVER MEMORY and the check goes on (it was exit 3, no report).
def test_a_sample_over_its_memory_limit_is_reported_and_the_check_goes_on(tmp_path):
    model = export_memory_model(str(tmp_path / "grows.onnx"))
    inputs = tmp_path / "inputs.npz"
    samples = {"small/x": np.array([10], np.float32),
               "big/x": np.array([200000], np.float32),   # 800 MB in one tensor
               "huge/x": np.array([3e10], np.float32)}    # more than any machine: ORT cannot allocate it
    # Under AddressSanitizer (make test SANITIZE=1) an allocation past ASan's
    # own maximum is ASan's fatal report, not a bad_alloc ORT could return.
    asan = "ASAN_OPTIONS" in os.environ
    if asan:
        del samples["huge/x"]
    np.savez(inputs, **samples)
    r, report, _ = check(model, str(tmp_path), "--inputs", str(inputs), "--sample-memory", "200")
    samples = {s["name"]: s for s in report["samples"]}
    assert samples["small"]["status"] == "PASS", samples["small"]
    assert samples["big"]["status"] == "OVER MEMORY", samples["big"]
    assert "past its limit of 200 MiB" in samples["big"]["error"], samples["big"]
    assert asan or samples["huge"]["status"] == "OVER MEMORY", samples["huge"]
    # The user's own samples could not be judged: never a PASS.
    assert report["overall_status"] == "FAIL" and r.returncode == 1, r.stdout + r.stderr


def test_a_generated_sample_the_runtime_cannot_allocate_is_not_the_end_of_the_check(tmp_path):
    model = export_memory_model(str(tmp_path / "grows.onnx"))
    r, report, seconds = check(model, str(tmp_path))
    assert seconds < 60
    stopped = [s for s in report["samples"] if s["status"] == "OVER MEMORY"]
    judged = [s for s in report["samples"] if s["status"] == "PASS"]
    assert judged, report["samples"]
    for s in stopped:  # generated: the reference's run too big, not judged, never a failure
        assert s["kind"] != "user"
    assert r.returncode in (0, 1, 4), r.stderr


def wheel_ort():
    """The onnxruntime wheel's library in this venv (another ORT than the bundled one)."""
    import glob
    import onnxruntime
    found = glob.glob(os.path.join(os.path.dirname(onnxruntime.__file__), "capi", "libonnxruntime.so.*"))
    return found[0] if found else None


# Issue 56 class 1: a reference ORT in a child process that dies mid-run made
# the samples after it look refused, and the check PASSed on the ones before.
def test_a_reference_runtime_that_dies_mid_run_never_passes(tmp_path):
    lib = wheel_ort()
    if lib is None:
        pytest.skip("no onnxruntime wheel in the venv")
    model = export_loop(str(tmp_path / "loop.onnx"))
    inputs = tmp_path / "inputs.npz"
    x = np.ones((2, 3), np.float32)
    np.savez(inputs, **{"few/x": x, "few/n": np.array(3, np.int64),
                        "long/x": x, "long/n": np.array(10**12, np.int64),
                        "after/x": x, "after/n": np.array(2, np.int64)})
    report = tmp_path / "report.json"
    proc = subprocess.Popen([PARITY, "check", model, "--inputs", str(inputs), "--reference-ort-library", lib,
                             "--sample-timeout", "60", "--runs", "1", "--warmup", "0", "--json", str(report)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The child runs 'long' for a minute: kill it there, as a crash would end it.
    deadline = time.monotonic() + 40
    child = None
    while time.monotonic() < deadline and child is None:
        time.sleep(0.5)
        ps = subprocess.run(["pgrep", "-P", str(proc.pid), "-f", "runner-worker"], capture_output=True, text=True)
        if ps.stdout.strip():
            child = int(ps.stdout.split()[0])
    assert child is not None, "no runner-worker child"
    time.sleep(3)  # 'few' has run; 'long' is running
    os.kill(child, 9)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, out
    if proc.returncode in (1, 4):
        with open(report, encoding="utf-8") as f:
            j = json.load(f)
        assert j["overall_status"] != "PASS", j["overall_status"]
        assert any("died" in m for m in j["coverage"]["missing"]), j["coverage"]
