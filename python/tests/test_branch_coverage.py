"""Control flow judged where a sample went (issue 51 item 7; docs/locate.md
"Control flow"): a branch or a Loop body counts as covered only through
samples whose values were judged (with a PyTorch dump: against PyTorch). A
torch.cond fault in the branch the dump's sample does not take is NOT JUDGED
(exit 4, naming the branch and how to dump a sample for it), never PASS;
`parity.torch dump --cover-branches N` dumps samples that take each branch,
and then the fault FAILS and its healthy twin PASSES. A Loop whose judged
samples never ran its body is NOT JUDGED too. An input the TorchScript
exporter dropped is matched by name and named in a note, not refused.
Needs the built binary (and torch with the dynamo exporter for the cond)."""

import json

import numpy as np
import pytest

pytest.importorskip("onnx")
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from parity_binary import PARITY, needs_parity  # noqa: E402
from zoo.control_flow import loop_model, save  # noqa: E402

pytestmark = needs_parity


def _check(tmp_path, name, *args):
    import subprocess
    report = tmp_path / name
    r = subprocess.run([PARITY, "check", *map(str, args), "--report", str(report)], capture_output=True, text=True,
                       timeout=300)
    return r, json.loads((report / "report.json").read_text())


def _planted(src, dst, weight, scale=1.05):
    """`src` with initializer `weight` x scale, saved as `dst`."""
    m = onnx.load(str(src))
    for init in m.graph.initializer:
        if init.name == weight:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * np.float32(scale), init.name))
    onnx.save(m, str(dst))
    return dst


@pytest.fixture(scope="module")
def cond(tmp_path_factory):
    """zoo.decode:CondBranches exported by dynamo (one If), dumped twice: the
    traced sample alone, and with --cover-branches 8; plus the export with
    its else branch (small.0.weight) x1.05, the branch the traced sample does
    not take."""
    torch = pytest.importorskip("torch")
    from conftest import HAS_DYNAMO, run_module
    if not HAS_DYNAMO:
        pytest.skip(f"torch {torch.__version__} has no dynamo exporter")
    tmp = tmp_path_factory.mktemp("cond")
    out = {"traced": tmp / "traced", "covered": tmp / "covered"}
    for dump, extra in (("traced", []), ("covered", ["--cover-branches", "8"])):
        r = run_module("parity.torch", "dump", "zoo.decode:CondBranches", "-o", str(out[dump]), "--export",
                       str(tmp / f"{dump}.onnx"), "--exporter", "dynamo", "--output-names", "y", "--sizes", "none",
                       *extra)
        assert r.returncode == 0, r.stderr
        out[dump + "_log"] = r.stdout
    out["model"] = tmp / "covered.onnx"
    # The traced sample takes the then branch ('big' is among its layers).
    layers = [l["module"] for l in json.loads((out["traced"] / "manifest.json").read_text())["layers"]]
    assert "big" in layers and "small" not in layers and "small.0" not in layers, layers
    out["bad"] = _planted(tmp / "traced.onnx", tmp / "bad.onnx", "small.0.weight")
    return out


def test_a_cond_fault_in_the_branch_the_dumps_sample_does_not_take_is_not_judged(tmp_path, cond):
    r, rep = _check(tmp_path, "r", cond["bad"], "--torch", cond["traced"])
    assert r.returncode == 4, r.stdout + r.stderr
    assert rep["overall_status"] == "NOT JUDGED" and rep["failed_tests"] == []
    cf = rep["control_flow"]
    (c,) = cf["ifs"]
    # Generated samples took the else branch, judged between ORT configs
    # only: they count as taken, not as judged.
    assert c["then_judged"] == 1 and c["else_judged"] == 0 and c["else_samples"] >= 1, c
    assert cf["judged_against"] == "PyTorch"
    (unjudged,) = rep["coverage"]["branches_unjudged"]
    assert unjudged.startswith(f"If '{c['node']}': no sample judged against PyTorch took its else_branch"), unjudged
    assert "--cover-branches" in unjudged and "judged between ONNX Runtime configs only" in unjudged
    assert f"else_branch in {c['else_samples']} (0 judged)" in r.stdout
    assert "not judged: If" in r.stdout


def test_with_samples_dumped_for_both_branches_the_fault_fails_and_its_healthy_twin_passes(tmp_path, cond):
    assert "1 more size(s) (branch1)" in cond["covered_log"], cond["covered_log"]
    r, rep = _check(tmp_path, "bad", cond["bad"], "--torch", cond["covered"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert rep["overall_status"] == "FAIL"
    failed = {s["name"] for s in rep["samples"] if s["status"] == "FAIL"}
    assert "torch:branch1" in failed and "torch" not in failed, failed
    r, rep = _check(tmp_path, "good", cond["model"], "--torch", cond["covered"])
    assert r.returncode == 0, r.stdout + r.stderr
    (c,) = rep["control_flow"]["ifs"]
    assert c["then_judged"] >= 1 and c["else_judged"] >= 1, c
    assert rep["coverage"]["branches_unjudged"] == [] and rep["control_flow"]["unjudged"] == []


def _loop_inputs(tmp_path, trips):
    path = tmp_path / "loop_in.npz"
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.savez(path, **{f"s{i}/x": x for i in range(len(trips))}, **{f"s{i}/n": np.array(n, np.int64)
                                                                    for i, n in enumerate(trips)})
    return path


def test_a_loop_body_no_judged_sample_ran_is_not_judged_and_is_judged_once_a_sample_runs_it(tmp_path):
    model, bad = save(loop_model(), tmp_path / "loop.onnx"), save(loop_model(1.05), tmp_path / "bad.onnx")
    r, rep = _check(tmp_path, "zero", bad, "--reference-model", model, "--inputs", _loop_inputs(tmp_path, [0, 0]))
    assert r.returncode == 4, r.stdout + r.stderr
    assert rep["overall_status"] == "NOT JUDGED"
    assert rep["control_flow"]["loops"] == [{"node": "loop", "ran_samples": 0, "ran_judged": 0,
                                             "most_iterations": 0}]
    (unjudged,) = rep["coverage"]["branches_unjudged"]
    assert unjudged.startswith("Loop 'loop': no sample judged against the reference ran its body"), unjudged
    assert "give --inputs a sample that runs it" in unjudged
    r, rep = _check(tmp_path, "bad", bad, "--reference-model", model, "--inputs", _loop_inputs(tmp_path, [0, 3]))
    assert r.returncode == 1, r.stdout + r.stderr
    assert rep["control_flow"]["loops"][0]["ran_judged"] == 1
    r, rep = _check(tmp_path, "good", model, "--reference-model", model, "--inputs", _loop_inputs(tmp_path, [0, 3]))
    assert r.returncode == 0, r.stdout + r.stderr
    assert rep["control_flow"]["loops"][0] == {"node": "loop", "ran_samples": 1, "ran_judged": 1,
                                               "most_iterations": 3}
    assert "Loop loop: body run by 1 of 2 samples (1 judged against the reference), at most 3 iterations" in r.stdout


@pytest.fixture(scope="module")
def dropped(tmp_path_factory):
    """zoo.branch_models' UnusedInput and FrozenInput exported by TorchScript,
    which drops `mask` (unused) and `scale` (float(scale) traced as a
    constant); each dump (made by the same command) holds both inputs."""
    pytest.importorskip("torch")
    from conftest import run_module
    tmp = tmp_path_factory.mktemp("dropped")
    out = {}
    for model, name in (("UnusedInput", "mask"), ("FrozenInput", "scale")):
        dump, onnx_path = tmp / model, tmp / f"{model}.onnx"
        r = run_module("parity.torch", "dump", f"zoo.branch_models:{model}", "-o", str(dump), "--export",
                       str(onnx_path), "--exporter", "torchscript", "--output-names", "y", "--sizes", "none")
        assert r.returncode == 0, r.stderr
        assert f"dropped input '{name}'" in r.stdout, r.stdout
        assert [i.name for i in onnx.load(str(onnx_path)).graph.input] == ["x"]
        assert set(json.loads((dump / "manifest.json").read_text())["inputs"]) == {"x", name}
        out[model] = (dump, onnx_path)
    out["bad"] = _planted(out["UnusedInput"][1], tmp / "bad.onnx", "fc.weight")
    return out


def _finding(rep, test_id):
    return [t for stage in rep["stages"].values() for t in stage["findings"] if t["id"] == test_id]


def test_an_input_the_exporter_dropped_is_matched_by_name_reported_and_judged(tmp_path, dropped):
    dump, model = dropped["UnusedInput"]
    r, rep = _check(tmp_path, "good", model, "--torch", dump)
    assert r.returncode == 0, r.stdout + r.stderr
    note = [n for n in rep["notes"] if "the exporter dropped it" in n]
    assert len(note) == 1 and "input 'mask' is not an input of" in note[0], rep["notes"]
    (f,) = _finding(rep, "signature.inputs.mask.dropped")
    assert f["status"] == "PASS" and "do not change with it" in f["message"], f
    assert any(s["name"] == "torch" and s["status"] == "PASS" for s in rep["samples"])
    r, rep = _check(tmp_path, "bad", dropped["bad"], "--torch", dump)  # its fc.weight x1.05: judged, fails
    assert r.returncode == 1, r.stdout + r.stderr
    assert any(s["name"] == "torch" and s["status"] == "FAIL" for s in rep["samples"])


def test_an_input_the_export_froze_at_its_traced_value_fails_by_name(tmp_path, dropped):
    dump, model = dropped["FrozenInput"]
    r, rep = _check(tmp_path, "frozen", model, "--torch", dump)
    assert r.returncode == 1, r.stdout + r.stderr
    (f,) = _finding(rep, "signature.inputs.scale.dropped")
    assert f["status"] == "FAIL" and "froze its traced value" in f["message"], f


def test_cover_branches_finds_a_sample_for_each_branch_or_names_the_one_it_could_not_reach():
    torch = pytest.importorskip("torch")
    from parity.torch.branches import cover_branches, describe

    class Sign(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t + 1, lambda t: t - 1, (x,))

    class Always(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.abs().sum() >= 0, lambda t: t + 1, lambda t: t - 1, (x,))

    x = torch.ones(2, 4)  # takes true_fn
    samples, missing, traced = cover_branches(Sign(), (x,), 0, 8)
    assert [name for name, _ in samples] == ["branch1"] and missing == {}
    assert float(samples[0][1][0].sum()) <= 0  # it takes false_fn
    assert list(traced.values()) == [{True}]
    samples, missing, traced = cover_branches(Always(), (x,), 0, 8)
    assert samples == [] and list(missing.values()) == [{False}]
    (warning,) = describe(missing, traced, 8)
    assert "no sample of 8 tried took its false_fn" in warning
