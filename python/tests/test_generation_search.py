"""Beam search and seeded sampling replayed (issue 51 item 5,
docs/generation.md "Beam search and sampling"): `dump --generate N --beams
K` and `--sample top_k=..,top_p=..,temperature=..,seed=..` record PyTorch's
choices (python/parity/torch/search.py), the beams' origins and the random
draws; `parity check` replays the same rules on ORT's logits with the same
draws (src/engine/generate/decode_search.cc). The healthy Llama step passes
under both; a planted weight fault is named at the step and beam where the
sequences part."""

import json
import os
import subprocess

import pytest
import torch

from parity_binary import PARITY, needs_parity

pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")
import gen_models as gm  # noqa: E402
from gen_build import dump_here  # noqa: E402
from parity.torch.exporter import export  # noqa: E402
from parity.torch.search import Search  # noqa: E402

STEPS = 12
FAULT = 1.02  # on gen_models.LLAMA_FAULT: the sequences part within 12 steps (beam: at step 7)
SAMPLING = ("top_k=40,top_p=0.95,temperature=1.5,seed={}")


def _dump(out, name, *argv):
    path = os.path.join(out, name)
    dump_here("dump", "gen_models:llama_step", "--generate", str(STEPS), *argv, "--sizes", "none", "-o", path,
              "--force", "--output-names", ",".join(gm.LLAMA_OUTPUTS))
    return path


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gen_search"))
    # K beams are K rows: the batch axis dynamic too.
    axes = {n: {0: "batch", **a} for n, a in gm.LLAMA_DYNAMIC.items()}
    kw = {"input_names": gm.LLAMA_INPUTS, "output_names": gm.LLAMA_OUTPUTS, "dynamic_axes": axes}
    for name, fault in (("step.onnx", None), ("step_fault.onnx", FAULT)):
        model = gm.llama_step(fault)
        export(model, model.make_inputs(0, seq=2, past=3), os.path.join(out, name), exporter="torchscript", **kw)
    dumps = {"beam": _dump(out, "beam", "--beams", "4")}
    for seed in (1, 2, 3):
        dumps[f"sample{seed}"] = _dump(out, f"sample{seed}", "--sample", SAMPLING.format(seed))
    return out, dumps


def _check(model, dump, report):
    p = subprocess.run([PARITY, "check", model, "--torch", dump, "--report", report, "--no-locate"],
                       capture_output=True, text=True)
    with open(os.path.join(report, "report.json")) as f:
        r = json.load(f)
    return p, r, {c["id"]: c for c in r["generation"]["checks"]}


def test_sampling_keeps_top_k_and_top_p_and_reads_the_draw():
    logits = torch.tensor([[0.0, 3.0, 2.9, -1.0, 2.0]])
    only_top = Search(top_k=1, sample=True)
    assert only_top.choose(logits)[0].tolist() == [1]  # top_k 1 is greedy whatever the draw
    nucleus = Search(top_p=0.5, sample=True, seed=4)
    tokens, origins, draws = nucleus.choose(logits)
    assert origins is None and len(draws) == 1 and tokens.tolist()[0] in (1, 2)  # the two largest reach 0.5
    beams = Search(beams=2)
    tokens, origins, _ = beams.choose(logits)
    assert tokens.tolist() == [1, 2] and origins.tolist() == [0, 0]


def test_the_dump_records_beams_and_draws(llama):
    _, dumps = llama
    with open(os.path.join(dumps["beam"], "manifest.json")) as f:
        g = json.load(f)["generation"]
    assert g["search"]["kind"] == "beam" and g["search"]["beams"] == 4, g["search"]
    assert all(len(s["tokens"]) == 4 and len(s["origins"]) == 4 for s in g["steps"])
    assert g["steps"][0]["origins"] == [0, 0, 0, 0] and g["steps"][3]["presents"]["present_key_0"]["shape"][0] == 4
    with open(os.path.join(dumps["sample1"], "manifest.json")) as f:
        g = json.load(f)["generation"]
    assert g["search"]["kind"] == "sample" and all(len(s["draws"]) == 1 for s in g["steps"]), g["search"]


@needs_parity
def test_beam_search_4_replays_and_passes(llama, tmp_path):
    out, dumps = llama
    p, r, checks = _check(os.path.join(out, "step.onnx"), dumps["beam"], str(tmp_path / "rep"))
    assert checks["search"]["status"] == "PASS", checks
    assert checks["search"]["message"] == "beam search (4 beams): every step gives PyTorch's tokens and beams"
    assert r["generation"]["status"] == "PASS" and r["generation"]["tokens_agreeing"] == STEPS, p.stdout
    assert p.returncode == 0, p.stdout + p.stderr


@needs_parity
@pytest.mark.parametrize("seed", (1, 2, 3))
def test_seeded_sampling_replays_with_the_same_draws(llama, tmp_path, seed):
    out, dumps = llama
    p, r, checks = _check(os.path.join(out, "step.onnx"), dumps[f"sample{seed}"], str(tmp_path / "rep"))
    assert checks["search"]["status"] == "PASS", checks
    assert r["generation"]["status"] == "PASS" and r["generation"]["tokens_agreeing"] == STEPS, p.stdout
    assert p.returncode == 0, p.stdout + p.stderr


@needs_parity
@pytest.mark.parametrize("which", ("beam", "sample1"))
def test_a_planted_fault_is_named_at_its_step_and_beam(llama, tmp_path, which):
    out, dumps = llama
    p, r, checks = _check(os.path.join(out, "step_fault.onnx"), dumps[which], str(tmp_path / "rep"))
    g = r["generation"]
    assert g["status"] == "FAIL" and p.returncode == 1, p.stdout + p.stderr
    assert checks["search"]["status"] == "FAIL", checks
    step = g["first_differing_step"]
    assert step is not None, g
    where = f"the sequences part at step {step}, {'beam' if which == 'beam' else 'row'} "
    assert where in checks["search"]["message"], checks["search"]


@needs_parity
@pytest.mark.parametrize("edit, field", [
    (lambda g: g["search"].update(kind="nope"), "generation.search.kind"),
    (lambda g: g["steps"][2].update(origins=[0, 9, 0, 0]), "generation.steps[2].origins[1]"),
    (lambda g: g["steps"][1].pop("origins"), "generation.steps[1].origins"),
])
def test_a_malformed_search_record_is_one_line_and_exit_2(llama, tmp_path, edit, field):
    out, dumps = llama
    dump = tmp_path / "bad"
    subprocess.run(["cp", "-r", dumps["beam"], str(dump)], check=True)
    m = json.loads((dump / "manifest.json").read_text())
    edit(m["generation"])
    (dump / "manifest.json").write_text(json.dumps(m))
    p = subprocess.run([PARITY, "check", os.path.join(out, "step.onnx"), "--torch", str(dump), "--no-locate"],
                       capture_output=True, text=True)
    assert p.returncode == 2 and field in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
