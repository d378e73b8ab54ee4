"""Issue 56 class 13: external initializers are read as the run reads them in
every command. A sparse 3 GiB table feeding a Gather of 3 rows: `run` read
what was used, but `check` and `locate` asked ORT to save its optimized
model with a side file for the weights, and ORT read the whole table to
write it (3.1 GB peak; 6.2 GB before for check, twice). Now the plan keeps
the external references as they are (optimized_plan.h PlanWeights)."""

import os
import subprocess

import numpy as np
import pytest

from parity_binary import PARITY, needs_parity

pytestmark = needs_parity
onnx = pytest.importorskip("onnx")


def sparse_gather_model(folder, rows=3 * 1024 * 1024 // 4, cols=1024, scale=1.0):
    from onnx import TensorProto as T, helper as h
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "table.bin"), "wb") as f:
        f.truncate(rows * cols * 4)  # 3 GiB of zeros, no blocks on disk
    table = onnx.TensorProto(name="table", data_type=T.FLOAT, dims=[rows, cols], data_location=T.EXTERNAL)
    for k, v in (("location", "table.bin"), ("offset", "0"), ("length", str(rows * cols * 4))):
        table.external_data.add(key=k, value=v)
    nodes = [h.make_node("Gather", ["table", "idx"], ["rows"], axis=0, name="lookup"),
             h.make_node("Add", ["rows", "bias"], ["y"], name="add_bias")]
    bias = onnx.numpy_helper.from_array(np.full((cols,), scale, np.float32), "bias")
    graph = h.make_graph(nodes, "lookup", [h.make_tensor_value_info("idx", T.INT64, [3])],
                         [h.make_tensor_value_info("y", T.FLOAT, [3, cols])], initializer=[table, bias])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    path = os.path.join(folder, "m.onnx")
    onnx.save(m, path)
    np.savez(os.path.join(folder, "idx.npz"), **{"a/idx": np.array([0, 5, 9], np.int64)})
    return path


def peak_kb(args):
    r = subprocess.run(["/usr/bin/time", "-f", "%M", PARITY, *args], capture_output=True, text=True, timeout=300)
    return r, int(r.stderr.strip().splitlines()[-1])


def test_check_and_locate_read_a_sparse_external_table_as_the_run_does(tmp_path):
    model = sparse_gather_model(str(tmp_path / "m"))
    inputs = str(tmp_path / "m" / "idx.npz")
    r, run_kb = peak_kb(["run", model, "--inputs", inputs, "-o", str(tmp_path / "out.npz")])
    assert r.returncode == 0, r.stderr
    r, check_kb = peak_kb(["check", model, "--inputs", inputs, "--runs", "1", "--warmup", "0"])
    assert r.returncode == 0, r.stdout + r.stderr
    r, locate_kb = peak_kb(["locate", model, "--inputs", inputs])
    assert r.returncode == 0, r.stdout + r.stderr
    # A few rows of a 3 GiB table: each command within a small multiple of `run`.
    assert check_kb < max(4 * run_kb, 400_000), (run_kb, check_kb)
    assert locate_kb < max(4 * run_kb, 400_000), (run_kb, locate_kb)


def test_a_fault_beside_an_external_table_is_still_found_and_named(tmp_path):
    # The derived model differs from the reference only in its bias: the plan
    # without a side file must still map the graph and name the node.
    ref = sparse_gather_model(str(tmp_path / "ref"), rows=4096, cols=256)
    bad = sparse_gather_model(str(tmp_path / "bad"), rows=4096, cols=256, scale=1.5)
    inputs = str(tmp_path / "ref" / "idx.npz")
    r = subprocess.run([PARITY, "locate", ref, "--target-model", bad, "--inputs", inputs],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "add_bias" in r.stdout, r.stdout
