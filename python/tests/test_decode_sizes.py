"""Sizes and roles for a KV-cache decode step (issue 41): `parity.torch dump
--dynamic` picks joint sizes that keep the mask = past + seq relation and one
past for every cache, past 0 included; `--input NAME=SHAPE:int64` gives ids in
the embedding's vocabulary, 0/1 masks with padding and positions after the
past. zoo.decode.DecodeStep is a tiny Llama-like step whose PyTorch forward
refuses a mask of any other length."""

import json
import os
import subprocess

import numpy as np
import pytest
import torch
import torch.nn as nn

from conftest import HAS_DYNAMO, load_manifest, load_tensor, run_module
from parity.torch.cli import parse_dynamic
from parity.torch.dynamic import normalize_dynamic_axes
from parity.torch.roles import inputs_for, probe_vocab
from parity.torch.sizes import plan_sizes, sized_args
from parity_binary import PARITY, needs_parity
from zoo.decode import DECODE_DYNAMIC, DECODE_INPUTS, DECODE_OUTPUTS, PAST, VOCAB, DecodeStep

ort = pytest.importorskip("onnxruntime")


def _traced():
    model = DecodeStep().eval()
    args = model.make_inputs(0)
    return model, args, {n: list(a.shape) for n, a in zip(DECODE_INPUTS, args)}


def _check_sample(shapes):
    past = {shapes[n][2] for n in DECODE_INPUTS[3:]}
    assert len(past) == 1, shapes
    assert shapes["attention_mask"][1] == past.pop() + shapes["input_ids"][1], shapes
    assert shapes["position_ids"] == shapes["input_ids"]


def test_joint_sizes_keep_the_mask_and_the_past_and_try_past_0():
    model, args, traced = _traced()
    samples, rel = plan_sizes(traced, normalize_dynamic_axes(parse_dynamic(DECODE_DYNAMIC)))
    assert rel.describe() == ["attention_mask[1] = past + seq"]
    assert [name for name, _ in samples] == ["batch1", "batch4", "seq1", "seq4", "past0", "past3", "past12"]
    for k, (name, shapes) in enumerate(samples):
        _check_sample(shapes)
        sized = sized_args(args, DECODE_INPUTS, shapes, seed=k)
        with torch.no_grad():
            logits = model(*sized)[0]  # PyTorch takes every sample (it raised on 3 of 8 before)
        assert list(logits.shape) == shapes["input_ids"] + [VOCAB], name
    past0 = dict(samples)["past0"]
    assert past0["past_key_0"][2] == 0 and past0["attention_mask"] == [2, 2]
    positions = sized_args(args, DECODE_INPUTS, past0, seed=0)[2]
    assert positions.tolist() == [[0, 1], [0, 1]]  # positions continue the (empty) past


def test_caches_with_their_own_labels_are_one_past_and_names_are_only_hints():
    _, _, traced = _traced()
    axes = normalize_dynamic_axes(parse_dynamic(DECODE_DYNAMIC))
    for k, name in enumerate(DECODE_INPUTS[3:]):
        axes[name]["2"] = f"past{k}"
    samples, rel = plan_sizes(traced, axes)
    assert [n for n, _ in samples] == ["batch1", "batch4", "seq1", "seq4", "past00", "past03", "past012"]
    for _, shapes in samples:
        _check_sample(shapes)
    # Names that say nothing: no relation is guessed from sizes alone ...
    blank = {n: None for n in traced}
    samples, rel = plan_sizes(traced, normalize_dynamic_axes(parse_dynamic(DECODE_DYNAMIC)), roles=blank)
    assert rel.describe() == [] and "total4" in [n for n, _ in samples]
    # ... but the sum the dynamo exporter spells in the file is one.
    samples, rel = plan_sizes(traced, normalize_dynamic_axes(parse_dynamic(DECODE_DYNAMIC)), roles=blank,
                              file_dims={"present_value_0": {"2": "past + seq"}})
    assert rel.describe() == ["attention_mask[1] = past + seq"]
    for _, shapes in samples:
        _check_sample(shapes)


def test_int_inputs_get_values_that_fit_their_role():
    model = DecodeStep()
    specs = [("input_ids", [3, 4], torch.int64), ("attention_mask", [3, PAST + 4], torch.int64),
             ("position_ids", [3, 4], torch.int64)] + [(n, [3, 2, PAST, 16], torch.float32) for n in DECODE_INPUTS[3:]]
    ids, mask, positions = inputs_for(model, specs, 0)[:3]
    assert ids.min() >= 0 and ids.max() < VOCAB and ids.max() >= 10  # the vocabulary, not 0..9
    # a batch as served (issue 51): row 1 left-padded, row 2's past right-padded; each row's positions
    # continue the tokens its mask keeps
    assert mask[0].tolist() == [1] * (PAST + 4)
    assert mask[1].tolist() == [0] + [1] * (PAST + 3) and mask[2].tolist() == [1] * 4 + [0, 0] + [1] * 4
    assert positions.tolist() == [[6, 7, 8, 9], [5, 6, 7, 8], [4, 5, 6, 7]]

    class Tiny(nn.Module):  # a table of 5 rows, an input named for nothing
        def __init__(self):
            super().__init__()
            self.table = nn.Embedding(5, 3)

        def forward(self, x):
            return self.table(x.view(-1))

    tiny = Tiny()
    assert probe_vocab(tiny, (torch.zeros(2, 8, dtype=torch.int64),), ["x"]) == {"x": 5}
    x = inputs_for(tiny, [("x", [2, 64], torch.int64)], 0)[0]
    assert x.max() == 4 and x.min() == 0


def test_dump_input_int64_ids_fit_the_vocabulary(tmp_dir):
    out = os.path.join(tmp_dir, "d")
    argv = ["dump", "zoo.decode:DecodeStep", "-o", out, "--no-fp64", "--input", "input_ids=2x3:int64",
            "--input", f"attention_mask=2x{PAST + 3}:int64", "--input", "position_ids=2x3:int64"]
    argv += [f"--input={n}=2x2x{PAST}x16" for n in DECODE_INPUTS[3:]]
    r = run_module("parity.torch", *argv)
    assert r.returncode == 0, r.stderr
    m = load_manifest(out)
    ids = load_tensor(out, m["inputs"]["input_ids"])
    assert ids.max() < VOCAB and ids.max() >= 10
    assert set(np.unique(load_tensor(out, m["inputs"]["attention_mask"]))) == {0, 1}
    assert load_tensor(out, m["inputs"]["position_ids"]).tolist() == [[6, 7, 8], [5, 6, 7]]  # row 1 left-padded


def _session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


@pytest.mark.skipif(not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")
def test_dynamo_decode_step_dump_every_size_runs_and_matches(tmp_dir):
    out, model = os.path.join(tmp_dir, "d"), os.path.join(tmp_dir, "m.onnx")
    r = run_module("parity.torch", "dump", "zoo.decode:DecodeStep", "-o", out, "--export", model,
                   "--exporter", "dynamo", "--output-names", ",".join(DECODE_OUTPUTS),
                   *[f"--dynamic={d}" for d in DECODE_DYNAMIC])
    assert r.returncode == 0, r.stderr
    m = load_manifest(out)
    assert [s["name"] for s in m["sizes"]] == ["batch1", "batch4", "seq1", "seq4", "past0", "past3", "past12"]
    assert "sizes_refused" not in m and "left out" not in r.stdout
    assert m["export"]["size_relations"] == ["attention_mask[1] = past + seq"]
    assert "sizes kept together: attention_mask[1] = past + seq" in r.stdout
    assert "traced at size 1" not in r.stdout  # traced at batch 2, seq 2: nothing fixed at 1
    session = _session(model)
    for s in m["sizes"]:
        feeds = {n: load_tensor(out, f) for n, f in s["inputs"].items()}
        _check_sample({n: list(v.shape) for n, v in feeds.items()})
        got = session.run(None, feeds)  # ONNX Runtime takes every dumped size
        for name, value in zip(DECODE_OUTPUTS, got):
            assert np.allclose(value, load_tensor(out, s["outputs"][name]), atol=1e-4), (s["name"], name)
    if os.access(PARITY, os.X_OK):
        report = os.path.join(tmp_dir, "r.json")
        subprocess.run([PARITY, "check", model, "--torch", out, "--runs", "1", "--warmup", "0", "--json", report],
                       capture_output=True, text=True)
        with open(report, encoding="utf-8") as f:
            found = {x["id"]: x for st in json.load(f)["stages"].values() for x in st["findings"]}
        sizes = found["numerics.torch.sizes"]
        assert sizes["status"] == "PASS" and "every dumped size (8)" in sizes["message"], sizes


def _dump_and_export(tmp_dir, factory, name):
    out, model = os.path.join(tmp_dir, name), os.path.join(tmp_dir, name + ".onnx")
    r = run_module("parity.torch", "dump", f"zoo.decode:{factory}", "-o", out, "--export", model,
                   "--exporter", "dynamo", "--output-names", ",".join(DECODE_OUTPUTS),
                   *[f"--dynamic={d}" for d in DECODE_DYNAMIC])
    assert r.returncode == 0, r.stderr
    return out, model


def _check(model, dump, report, *extra):
    r = subprocess.run([PARITY, "check", model, "--torch", dump, "--runs", "2", "--warmup", "0", "--json", report,
                        *extra], capture_output=True, text=True, timeout=600)
    with open(report, encoding="utf-8") as f:
        return r, json.load(f)


@needs_parity
@pytest.mark.skipif(not HAS_DYNAMO, reason=f"torch {torch.__version__} has no dynamo exporter")
def test_default_check_of_a_healthy_decode_step_passes_and_a_planted_v_proj_fails_at_its_module(tmp_dir):
    """Issue 41's must-show: the generated samples fit the step (mask = past + seq, one past for every cache, ids
    in the vocabulary, 0/1 masks, positions after the past), so a default check of a correct dynamo export passes;
    a 1.02 weight in one attention projection fails and is named at its module."""
    dump, model = _dump_and_export(tmp_dir, "DecodeStep", "healthy")
    r, report = _check(model, dump, os.path.join(tmp_dir, "healthy.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert report["overall_status"] == "PASS"
    generated = report["generated_inputs"]
    assert generated["roles"]["input_ids"] == "ids" and generated["roles"]["attention_mask"] == "mask"
    assert generated["roles"]["position_ids"] == "positions" and generated["roles"]["past_key_1"] == "cache"
    assert "total = past + seq" in generated["relations"]
    assert "sizes kept together: " in r.stdout
    names = {s["name"]: s for s in report["samples"]}
    for sample in ("typical", "boundary_past0", "boundary_min_size", "boundary_edges"):
        assert names[sample]["status"] == "PASS", (sample, names[sample])
    assert not report["failed_tests"]

    _, faulty = _dump_and_export(tmp_dir, "faulty_v_proj", "faulty")
    r, report = _check(faulty, dump, os.path.join(tmp_dir, "faulty.json"))
    assert r.returncode == 1, r.stdout + r.stderr
    assert report["overall_status"] == "FAIL"
    first = report["alignment"]["first_divergence"]
    assert first is not None and first["module"].startswith("layers.0.self_attn"), first
