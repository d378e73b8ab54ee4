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
