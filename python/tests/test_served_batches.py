"""Decode steps as they are served (issue 51, items 2 and 3): generated samples
with padded batches (left padding, a past right-padded, right padding; masks
with zeros in the past), positions that continue each row's kept tokens after
the past (GPT-2's position_ids, read by an embedding, are positions, not ids),
the `total = past + seq` relation kept whatever --dim says or refused in one
line, --range honoured on token ids; and prefill against stepwise judged where
the mask keeps the tokens. Every fault has its healthy twin: an independent
export of the same function (served_models.py)."""

import json
import os
import subprocess

import numpy as np
import pytest
import torch

from parity_binary import PARITY, needs_parity

pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")
import served_models as sm  # noqa: E402
from gen_build import dump_here  # noqa: E402
from parity.torch.exporter import export  # noqa: E402
from zoo.decode import DecodeStep  # noqa: E402

pytestmark = needs_parity
KW = {"input_names": sm.PADDED_INPUTS, "output_names": sm.PADDED_OUTPUTS, "dynamic_axes": sm.STEP_DYNAMIC}


def _export(model, args, path):
    export(model.eval(), args, path, exporter="torchscript", force=True, **KW)
    return path


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    """ref.onnx (zoo.decode.DecodeStep), healthy.onnx (PaddedStep: the same function, its own mask code),
    past_mask.onnx, positions.onnx (the faults), and dump/: PyTorch's decode of the left-padded prompt."""
    out = str(tmp_path_factory.mktemp("served"))
    torch.set_num_threads(1)
    args = sm.PaddedStep().make_inputs(0, past=3)
    torch.manual_seed(0)  # PaddedStep's seed: the same weights
    _export(DecodeStep(), args, os.path.join(out, "ref.onnx"))
    for name, fault in (("healthy", None), ("past_mask", "past_mask"), ("positions", "positions")):
        _export(sm.PaddedStep(fault), args, os.path.join(out, f"{name}.onnx"))
    dump_here("dump", "served_models:padded_step", "--generate", "8", "-o", os.path.join(out, "dump"), "--force",
              "--output-names", ",".join(sm.PADDED_OUTPUTS))
    return out


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    """gpt2.onnx (a GPT-2 step traced at batch 2, seq 3, past 4), gpt2_twin.onnx (the same model traced at
    batch 3, seq 2, past 5), gpt2_positions.onnx (positions restart after the past)."""
    out = str(tmp_path_factory.mktemp("served_gpt2"))
    torch.set_num_threads(1)
    model = sm.gpt2_step()
    _export(model, model.make_inputs(), os.path.join(out, "gpt2.onnx"))
    _export(sm.gpt2_step(), model.make_inputs(seq=2, past=5, batch=3), os.path.join(out, "gpt2_twin.onnx"))
    _export(sm.gpt2_step("positions"), model.make_inputs(), os.path.join(out, "gpt2_positions.onnx"))
    return out


def _check(model, *argv):
    report = model + ".json"
    r = subprocess.run([PARITY, "check", model, "--runs", "1", "--warmup", "0", "--json", report, *argv],
                       capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    with open(report, encoding="utf-8") as f:
        return r.returncode, json.load(f)


def _samples(report):
    return {s["name"]: s["status"] for s in report["samples"]}


def _inputs(model, out, *argv):
    return subprocess.run([PARITY, "inputs", model, "-o", out, *argv], capture_output=True, text=True)


def test_a_left_padded_batch_of_a_healthy_decoder_passes_and_a_past_mask_fault_fails_the_loop(steps):
    dump = os.path.join(steps, "dump")
    # PyTorch's own prompt at once and one token at a time differ only in the padded tokens' cache rows
    # (layer 1: a padded token attends to nothing, and makes something else of it each way).
    mask = sm.PaddedStep().make_inputs(0)[1].numpy()
    a = np.load(os.path.join(dump, "generate", "step000_present_value_1.npy"))
    b = np.load(os.path.join(dump, "generate", "stepwise_present_value_1.npy"))
    diff = np.abs(a - b).max(axis=(1, 3))  # [batch, positions]
    assert diff[mask == 0].max() > 0.1 and diff[mask == 1].max() < 1e-5, diff
    code, report = _check(os.path.join(steps, "healthy.onnx"), "--torch", dump)
    checks = {c["id"]: c for c in report["generation"]["checks"]}
    assert code == 0 and report["generation"]["status"] == "PASS", checks
    for cid in ("prefill_equals_stepwise", "torch_prefill_equals_stepwise"):
        assert checks[cid]["status"] == "PASS", checks[cid]
        assert "3 padded position(s) of the caches" in checks[cid]["message"], checks[cid]
    code, report = _check(os.path.join(steps, "past_mask.onnx"), "--torch", dump)
    assert code == 1 and report["generation"]["status"] == "FAIL"
    assert report["generation"]["first_failing_logits_step"] == 1  # the first step with a padded past


def test_a_past_mask_fault_fails_on_generated_samples_alone(steps):
    code, report = _check(os.path.join(steps, "healthy.onnx"), "--reference-model", os.path.join(steps, "ref.onnx"))
    samples = _samples(report)
    assert code == 0 and set(samples.values()) <= {"PASS", "SKIPPED"}, samples
    code, report = _check(os.path.join(steps, "past_mask.onnx"), "--reference-model", os.path.join(steps, "ref.onnx"))
    samples = _samples(report)
    assert code == 1
    # caught by the padded batch, whose rows 1 and 2 have zeros in the past (not only by the all-zero mask)
    assert samples["boundary_batch4"] == "FAIL" and samples["typical"] == "PASS", samples


def test_positions_continue_after_the_past_and_a_step_that_ignores_the_past_fails(steps, gpt2):
    code, report = _check(os.path.join(steps, "positions.onnx"), "--reference-model", os.path.join(steps, "ref.onnx"))
    samples = _samples(report)
    assert code == 1 and samples["typical"] == "FAIL" and samples["boundary_past0"] == "PASS", samples
    # GPT-2: position_ids feed the wpe embedding, and are positions all the same
    npz = os.path.join(gpt2, "g.npz")
    r = _inputs(os.path.join(gpt2, "gpt2.onnx"), npz)
    assert r.returncode == 0, r.stderr
    assert "position_ids positions" in r.stdout and "sizes kept together: total = past + seq" in r.stdout
    z = np.load(npz)
    assert z["typical/position_ids"].tolist() == [list(range(32, 64))]
    assert z["boundary_batch4/position_ids"][:, 0].tolist() == [32, 31, 30, 32]  # per row, after its kept tokens
    code, report = _check(os.path.join(gpt2, "gpt2_twin.onnx"), "--reference-model", os.path.join(gpt2, "gpt2.onnx"))
    samples = _samples(report)
    assert code == 0 and set(samples.values()) <= {"PASS", "SKIPPED"}, samples
    code, report = _check(os.path.join(gpt2, "gpt2_positions.onnx"), "--reference-model",
                          os.path.join(gpt2, "gpt2.onnx"))
    samples = _samples(report)
    assert code == 1 and samples["typical"] == "FAIL" and samples["boundary_past0"] == "PASS", samples


def test_dim_keeps_the_relation_or_is_refused_in_one_line(steps, tmp_path):
    model, npz = os.path.join(steps, "ref.onnx"), str(tmp_path / "s.npz")
    r = _inputs(model, npz, "--dim", "total=9", "--dim", "seq=2")
    assert r.returncode == 0, r.stderr
    z = np.load(npz)
    assert z["typical/attention_mask"].shape == (1, 9) and z["typical/past_key_0"].shape == (1, 2, 7, 16)
    for argv in (["--dim", "total=9"], ["--dim", "total=9", "--dim", "past=4", "--dim", "seq=2"]):
        for cmd in ([PARITY, "inputs", model, "-o", npz], [PARITY, "check", os.path.join(steps, "past_mask.onnx"),
                                                           "--reference-model", model]):
            r = subprocess.run(cmd + argv, capture_output=True, text=True)
            assert r.returncode == 2, r.stdout + r.stderr
            assert len(r.stderr.strip().splitlines()) == 1 and "total = past + seq" in r.stderr, r.stderr


def test_range_on_a_token_id_input_is_honoured(steps, tmp_path):
    npz = str(tmp_path / "r.npz")
    r = _inputs(os.path.join(steps, "ref.onnx"), npz, "--range", "input_ids:5,7")
    assert r.returncode == 0, r.stderr
    z = np.load(npz)
    for sample in ("typical", "boundary_batch4", "boundary_edges"):
        assert set(np.unique(z[f"{sample}/input_ids"])) == {5, 6}, sample


def test_dump_inputs_are_a_batch_as_served_and_gpt2_positions_are_positions():
    from parity.torch.roles import inputs_for
    model = sm.gpt2_step()
    specs = [("input_ids", [3, 3], torch.int64), ("attention_mask", [3, 7], torch.int64),
             ("position_ids", [3, 3], torch.int64)] + [(n, [3, 2, 4, 16], torch.float32) for n in sm.PADDED_INPUTS[3:]]
    ids, mask, positions = inputs_for(model, specs, 0)[:3]
    assert ids.max() >= 10  # ids from the vocabulary (128): the wte table
    assert mask.tolist() == [[1] * 7, [0] + [1] * 6, [1, 1, 0, 0, 1, 1, 1]]
    # read by the wpe table, but positions: after the past, per row after the tokens the mask keeps
    assert positions.tolist() == [[4, 5, 6], [3, 4, 5], [2, 3, 4]]
    with torch.no_grad():
        model(*inputs_for(model, specs, 0))  # PyTorch takes them
