"""Tensors inside If/Loop bodies observed by locate, check and baseline
(issue 41 item 4; docs/locate.md "Control flow"): a fault planted in a Loop
body or in an If's taken branch is named at the body's node, every If's
branch coverage is reported, and a fault in a branch no sample takes is a
coverage note, not a silent PASS. Models: zoo/control_flow.py (onnx.helper)
and a TorchScript loop with an int64 trip count. Needs the built binary."""

import json
import os
import subprocess
import time

import numpy as np
import pytest

pytest.importorskip("onnx")
from parity_binary import PARITY, needs_parity  # noqa: E402
from zoo.control_flow import if_model, loop_model, nested_model, save  # noqa: E402

pytestmark = needs_parity


def _run(*args):
    return subprocess.run([PARITY, *map(str, args)], capture_output=True, text=True, timeout=300)


def _loop_inputs(tmp_path, n=3):
    path = tmp_path / "loop_in.npz"
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.savez(path, x=x, n=np.array(n, np.int64))
    return path


def _if_inputs(tmp_path, signs):
    """One sample per sign: +1 takes then_branch (sum(x) > 0), -1 else_branch."""
    path = tmp_path / "if_in.npz"
    x = np.abs(np.random.default_rng(0).standard_normal((2, 4))).astype(np.float32)
    np.savez(path, **{f"s{i}/x": x * np.float32(s) for i, s in enumerate(signs)})
    return path


def _locate(tmp_path, model, target, inputs):
    out = tmp_path / "locate.json"
    r = _run("locate", model, "--target-model", target, "--inputs", inputs, "--no-ablation", "--json", out)
    return r, json.loads(out.read_text())


def test_a_fault_in_a_loop_body_is_named_at_the_body_node(tmp_path):
    model, bad = save(loop_model(), tmp_path / "loop.onnx"), save(loop_model(1.05), tmp_path / "bad.onnx")
    r, rep = _locate(tmp_path, model, bad, _loop_inputs(tmp_path))
    assert r.returncode == 1, r.stderr
    first = rep["first_divergence"]  # at target "all" ORT fuses body_matmul and body_add into a Gemm
    assert first["producer"] in ("body_matmul@0", "body_add@0") and "body_matmul@0" in first["covered_nodes"]
    assert first["body"] == f"node '{first['producer'][:-2]}' in Loop 'loop' iteration 0"
    assert rep["culprits"][0]["body"].startswith("node 'body_matmul' in Loop 'loop' iteration ")
    assert "from the body: node 'body_" in r.stdout and "in Loop 'loop' iteration 0" in r.stdout
    assert all("body" not in c for c in rep["culprits"] if c["fused_node"] in ("post_mul", "loop/stack"))
    assert rep["control_flow"]["present"] and rep["control_flow"]["notes"] == []


def test_every_iteration_of_a_healthy_loop_is_observed_and_passes(tmp_path):
    model = save(loop_model(), tmp_path / "loop.onnx")
    out = tmp_path / "locate.json"
    r = _run("locate", model, "--inputs", _loop_inputs(tmp_path, n=4), "--json", out)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {t["name"]: t for t in json.loads(out.read_text())["tensors"]}
    for k in range(4):
        assert rows[f"h_mm@{k}"]["producer"] == f"body_matmul@{k}"
        assert rows[f"h_mm@{k}"]["status"] in ("pass", "unchecked")
    assert "h_mm@4" not in rows


def test_a_loop_past_the_unroll_limit_is_said_to_be_unobserved(tmp_path):
    """n = 100 iterations; the probe stops at 65 (an INT64_MAX trip count would not hang it)."""
    model, bad = save(loop_model(), tmp_path / "loop.onnx"), save(loop_model(1.05), tmp_path / "bad.onnx")
    r, rep = _locate(tmp_path, model, bad, _loop_inputs(tmp_path, n=100))
    assert r.returncode == 1
    assert any(n.startswith("Loop 'loop' ran more than 64 iterations, the most parity unrolls: its body")
               for n in rep["control_flow"]["notes"])
    assert rep["first_divergence"]["producer"] == "loop"  # the Loop node itself, no body named
    assert "body" not in rep["first_divergence"]


def test_an_if_nested_in_a_loop_body_is_observed_per_iteration(tmp_path):
    model, bad = save(nested_model(), tmp_path / "n.onnx"), save(nested_model(1.05), tmp_path / "bad.onnx")
    r, rep = _locate(tmp_path, model, bad, _loop_inputs(tmp_path, n=3))
    assert r.returncode == 1, r.stderr
    assert rep["first_divergence"]["producer"] == "even_matmul@0"
    assert rep["first_divergence"]["body"] == "node 'even_matmul' in If 'inner' then_branch in Loop 'outer' iteration 0"
    cf = rep["control_flow"]  # iterations 0 and 2 took then_branch, 1 else_branch: one sample, both branches
    assert cf["ifs"] == [{"node": "inner", "then_samples": 1, "else_samples": 1}] and cf["notes"] == []
    bodies = {c["fused_node"]: c.get("body") for c in rep["culprits"]}
    assert bodies.get("odd_add@1") == "node 'odd_add' in If 'inner' else_branch in Loop 'outer' iteration 1"


def test_a_fault_in_the_taken_branch_is_named_at_its_node(tmp_path):
    model, bad = save(if_model(), tmp_path / "if.onnx"), save(if_model(then_scale=1.05), tmp_path / "bad.onnx")
    r, rep = _locate(tmp_path, model, bad, _if_inputs(tmp_path, [1]))
    assert r.returncode == 1, r.stderr
    assert rep["first_divergence"]["producer"] == "then_matmul"
    assert rep["first_divergence"]["body"] == "node 'then_matmul' in If 'branch' then_branch"
    cf = rep["control_flow"]
    assert cf["ifs"] == [{"node": "branch", "then_samples": 1, "else_samples": 0}]
    assert "If 'branch': no sample took its else_branch; a fault there cannot show" in cf["notes"]


def test_check_states_branch_coverage_and_a_fault_in_an_untaken_branch_is_not_judged(tmp_path):
    model, bad = save(if_model(), tmp_path / "if.onnx"), save(if_model(else_scale=1.05), tmp_path / "bad.onnx")
    out = tmp_path / "report"
    r = _run("check", bad, "--reference-model", model, "--inputs", _if_inputs(tmp_path, [1, 1]), "--report", out)
    # No sample reaches the fault: nothing can fail, and nothing can pass
    # either: NOT JUDGED, exit 4 (issue 50), never PASS.
    assert r.returncode == 4, r.stdout + r.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["overall_status"] == "NOT JUDGED"
    assert rep["coverage"]["branches_unjudged"] == ["If 'branch': no sample judged against the reference took its "
                                                    "else_branch: a difference there could not show; give --inputs a "
                                                    "sample that takes it"]
    note = "If 'branch': no sample took its else_branch; a fault there cannot show"
    assert rep["control_flow"]["ifs"] == [{"node": "branch", "then_samples": 2, "else_samples": 0, "then_judged": 2,
                                           "else_judged": 0}]
    assert note in rep["control_flow"]["notes"]  # ...and the report says so
    assert note in r.stdout
    assert "If branch: then_branch in 2 of 2 samples (2 judged against the reference), else_branch in 0 (0 judged)" \
        in r.stdout
    html = (out / "report.html").read_text()
    assert 'id="control-flow"' in html and "no sample took its else_branch" in html


def test_check_fails_a_fault_in_a_branch_a_sample_takes_and_names_its_node(tmp_path):
    model, bad = save(if_model(), tmp_path / "if.onnx"), save(if_model(else_scale=1.05), tmp_path / "bad.onnx")
    out = tmp_path / "report"
    r = _run("check", bad, "--reference-model", model, "--inputs", _if_inputs(tmp_path, [1, -1]), "--report", out)
    assert r.returncode == 1, r.stdout + r.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["control_flow"]["ifs"] == [{"node": "branch", "then_samples": 1, "else_samples": 1, "then_judged": 1,
                                           "else_judged": 1}]
    assert not any("cannot show" in n for n in rep["control_flow"]["notes"])
    assert rep["locate"]["first_divergence"]["body"] == "node 'else_mul' in If 'branch' else_branch"


def test_a_default_check_of_a_loop_with_an_int64_trip_count_ends_and_reports_its_control_flow(tmp_path):
    model = save(loop_model(), tmp_path / "loop.onnx")
    out = tmp_path / "report"
    r = subprocess.run([PARITY, "check", str(model), "--runs", "1", "--warmup", "0", "--report", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    cf = json.loads((out / "report.json").read_text())["control_flow"]
    assert cf["present"] and cf["samples"] >= 1 and cf["ifs"] == []
    assert "control flow: If/Loop bodies observed" in r.stdout


def test_baseline_writes_each_iteration_of_a_loop_body_and_verify_reruns_it(tmp_path):
    model = save(loop_model(), tmp_path / "loop.onnx")
    out = tmp_path / "base"
    r = _run("baseline", model, "--inputs", _loop_inputs(tmp_path, n=2), "-o", out)
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    layers = {f["tensor"]: f for f in manifest["samples"][0]["files"] if f["role"] == "layer"}
    assert layers["h_mm@1"]["producer"] == "body_matmul@1" and "h_mm@2" not in layers
    assert manifest["control_flow"]["notes"] == []
    v = _run("baseline", "verify", out, model)
    assert v.returncode == 0, v.stdout + v.stderr
    bad = save(loop_model(1.05), tmp_path / "bad.onnx")
    v = _run("baseline", "verify", out, bad)
    assert v.returncode == 1 and "h_mm@0" in v.stdout


def test_a_torchscript_loop_with_an_int64_trip_count_is_located_in_its_body(tmp_path):
    torch = pytest.importorskip("torch")
    import onnx
    from onnx import numpy_helper

    class Steps(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x, n):
            for _ in range(int(n)):
                x = torch.tanh(self.fc(x))
            return x

    torch.manual_seed(0)
    scripted = torch.jit.script(Steps())
    path = tmp_path / "steps.onnx"
    torch.onnx.export(scripted, (torch.randn(2, 4), torch.tensor(3)), str(path), input_names=["x", "n"],
                      output_names=["y"], dynamo=False, opset_version=17)
    m = onnx.load(str(path))
    assert any(n.op_type == "Loop" for n in m.graph.node)
    for init in m.graph.initializer:  # plant: the body's weight x 1.05
        if init.name.endswith("weight"):
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * np.float32(1.05), init.name))
    bad = tmp_path / "bad.onnx"
    onnx.save(m, str(bad))
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32), n=np.array(3, np.int64))
    r, rep = _locate(tmp_path, path, bad, inputs)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "in Loop" in rep["first_divergence"]["body"] and "iteration 0" in rep["first_divergence"]["body"]
    assert "Gemm" in rep["first_divergence"]["op_type"] or "MatMul" in rep["first_divergence"]["op_type"]


def test_a_torch_cond_branch_no_dumped_sample_took_is_not_judged(tmp_path):
    """parity.torch dump of a torch.cond model whose branches call submodules
    (test_dump_control_flow.py), then check against the dump: the If's
    coverage is in the report, and the branch the dump's sample did not take
    was judged against PyTorch by no sample: a fault there could not show,
    so the check is NOT JUDGED (exit 4, issue 50), not PASS, whatever the
    generated samples judged between two ORT configs took."""
    torch = pytest.importorskip("torch")
    from conftest import HAS_DYNAMO, run_module

    if not HAS_DYNAMO:
        pytest.skip(f"torch {torch.__version__} has no dynamo exporter")
    out, path = tmp_path / "d", tmp_path / "m.onnx"
    r = run_module("parity.torch", "dump", "zoo.decode:CondBranches", "-o", str(out), "--export", str(path),
                   "--exporter", "dynamo", "--output-names", "y", "--sizes", "none")
    assert r.returncode == 0, r.stderr
    report = tmp_path / "report"
    c = _run("check", path, "--torch", out, "--report", report)
    rep = json.loads((report / "report.json").read_text())
    assert c.returncode == 4, c.stdout + c.stderr
    assert rep["overall_status"] == "NOT JUDGED" and rep["failed_tests"] == []
    cf = rep["control_flow"]
    assert len(cf["ifs"]) == 1 and cf["samples"] >= 1
    taken = cf["ifs"][0]["then_samples"] + cf["ifs"][0]["else_samples"]
    assert taken == cf["samples"]  # each probed sample took one branch of the one If
    unjudged = rep["coverage"]["branches_unjudged"]
    assert len(unjudged) == 1 and "no sample judged against PyTorch took" in unjudged[0], unjudged
    assert cf["unjudged"] == unjudged and rep["coverage"]["missing"]
    assert "not judged: If" in c.stdout


def _loop_around_a_wide_loop(path, outer_width=600, inner_width=3000, trips=64):
    """A Loop of `trips` iterations whose body is `outer_width` Adds and a
    one-iteration Loop of `inner_width` Adds: cheap to run (one pass over the
    inner body per iteration), but each unrolled iteration copies the nested
    body whole."""
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper

    def adds(level, src, width):
        nodes = []
        for k in range(width):
            nodes.append(h.make_node("Add", [src, f"one{level}"], [f"a{level}_{k}"], name=f"add{level}_{k}"))
            src = f"a{level}_{k}"
        return nodes, src

    def body(level, width, inner):
        nodes, src = [], f"v_in{level}"
        if inner is not None:
            nodes.append(h.make_node("Loop", [f"n{level}", "", src], [f"v_mid{level}"], body=inner, name=f"loop{level}"))
            src = f"v_mid{level}"
        more, src = adds(level, src, width)
        nodes += more + [h.make_node("Identity", [f"c_in{level}"], [f"c_out{level}"]),
                         h.make_node("Identity", [src], [f"v_out{level}"])]
        init = [numpy_helper.from_array(np.array(1, np.int64), f"n{level}"),
                numpy_helper.from_array(np.ones(1, np.float32), f"one{level}")]
        return h.make_graph(nodes, f"b{level}",
                            [h.make_tensor_value_info(f"i{level}", T.INT64, []),
                             h.make_tensor_value_info(f"c_in{level}", T.BOOL, []),
                             h.make_tensor_value_info(f"v_in{level}", T.FLOAT, [1])],
                            [h.make_tensor_value_info(f"c_out{level}", T.BOOL, []),
                             h.make_tensor_value_info(f"v_out{level}", T.FLOAT, [1])], initializer=init)

    top = h.make_node("Loop", ["N", "", "x"], ["y"], body=body(1, outer_width, body(0, inner_width, None)), name="top")
    graph = h.make_graph([top], "nested", [h.make_tensor_value_info("x", T.FLOAT, [1])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1])],
                         initializer=[numpy_helper.from_array(np.array(trips, np.int64), "N")])
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


# Issue 56 class 2: a copy is budgeted by every node it holds, nested bodies
# included. The node cap counted top-level nodes only: 64 iterations of 603
# top-level nodes passed it, and each carried the 3,000-node nested body
# (about 230,000 nodes copied, and a session of them, per sample and level).
def test_copies_of_nested_loop_bodies_are_budgeted_by_every_node_they_hold(tmp_path):
    model = _loop_around_a_wide_loop(str(tmp_path / "nested.onnx"))
    report = tmp_path / "r.json"
    start = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", PARITY, "check", model, "--runs", "1", "--warmup", "0",
                        "--json", str(report)], capture_output=True, text=True, timeout=240)
    seconds = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr
    peak_kb = int(r.stderr.strip().splitlines()[-1])
    # Under AddressSanitizer the resident memory is mostly ASan's shadow: the bound is the plain build's.
    assert "ASAN_OPTIONS" in os.environ or peak_kb < 1_000_000, f"peak RSS {peak_kb} KB"
    assert seconds < 90, f"{seconds:.0f} s"
    notes = json.load(open(report, encoding="utf-8"))["control_flow"]["notes"]
    assert any("Loop 'top'" in n and "nested bodies included" in n for n in notes), notes
