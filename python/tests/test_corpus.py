"""check --corpus (issue 52, docs/generation.md "A prompt corpus"): PyTorch's
greedy decode over a prompt corpus, stored as top-k logits + log-sum-exp
(python -m parity.torch corpus), replayed teacher-forced on ORT: KL(PyTorch ||
ORT), top-token agreement, rank and the first divergent token per step; on
the 2-layer Llama step of gen_models (seeded weights) healthy and with three
planted faults that move KL a little (a x1.01 weight, an fp16 copy, an int8
copy); the Ray engine gives the local engine's numbers."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from parity_binary import PARITY, REPO, needs_parity

pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")
from corpus_build import export_faults, record, write_prompts  # noqa: E402
from gen_build import CHILD_ENV  # noqa: E402
import gen_models as gm  # noqa: E402

pytestmark = needs_parity
PROMPTS, STEPS = 16, 12
FAULTS = ("step_w101", "step_fp16", "step_int8")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("corpus"))
    export_faults(out)
    write_prompts(os.path.join(out, "prompts.jsonl"), PROMPTS)
    record(out, STEPS)
    return out


def check(built, model, *extra, env=None):
    out = tempfile.mktemp(suffix=".json", dir=built)
    r = subprocess.run([PARITY, "check", os.path.join(built, f"{model}.onnx"), "--json", out, *extra],
                       capture_output=True, text=True, env=env or CHILD_ENV, timeout=600)
    data = json.load(open(out)) if os.path.exists(out) else None
    return r, data


def corpus(built, model, *extra, **kw):
    return check(built, model, "--corpus", os.path.join(built, "corpus"), *extra, **kw)


def validate(data):
    import jsonschema
    with open(os.path.join(REPO, "docs", "report.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validate(data, {**schema, "$ref": "#/$defs/corpus_report", "required": [], "properties": {}})


def test_a_healthy_decoder_has_kl_near_zero_and_the_same_top_token_every_step(built, tmp_path):
    r, data = corpus(built, "step", "--report", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stdout + r.stderr
    validate(data)
    c = data["corpus"]
    assert c["prompts"] == PROMPTS and c["steps_judged"] == PROMPTS * STEPS
    assert c["share_agreeing"] == 1 and c["rank"]["max"] == 1
    assert c["kl"]["max"] < 1e-13 and c["kl_tolerance_origin"] == "calibrated"
    assert c["kl"]["max"] <= c["kl_tolerance"]
    assert all(row["first_divergent_step"] is None for row in c["rows"])
    assert c["bytes_per_step"] == 64 * 8 + 16 and c["store_bytes"] == c["bytes_per_step"] * PROMPTS * STEPS
    html = (tmp_path / "rep" / "report.html").read_text()
    for chart in ("corpus_steps", "corpus_prompts"):
        assert f'data-chart="{chart}"' in html
    assert "prompt 0: t" in html  # the worst prompts with their text
    assert "corpus: PASS" in r.stdout


@pytest.mark.parametrize("fault", FAULTS)
def test_a_planted_fault_that_moves_kl_a_little_is_separated_from_the_healthy_decoder(built, fault):
    _, healthy = corpus(built, "step")
    r, data = corpus(built, fault)
    assert r.returncode == 1, r.stdout + r.stderr
    h, c = healthy["corpus"], data["corpus"]
    # The whole distribution moves: the fault's median step is above the healthy decoder's worst.
    assert c["kl"]["median"] > 100 * h["kl"]["max"], (c["kl"], h["kl"])
    assert c["prompt_max_kl"]["median"] > c["kl_tolerance"]
    assert c["prompts_failing"] > 0 and "corpus: FAIL" in r.stdout
    for row in c["rows"]:  # a divergence is where teacher forcing first sees another top token
        steps = row["steps"]
        div = next((i for i, s in enumerate(steps) if not s["agree"]), None)
        assert row["first_divergent_step"] == div
        assert all(s["rank"] == 1 for s in steps if s["agree"])


def test_the_top_k_kl_is_a_lower_bound_within_its_stated_tail_bound(built, tmp_path):
    """With k = the vocabulary the KL is exact (bound 0); at k = 64 each step's
    KL is at most the exact one and at least it minus the stated bound."""
    exact = tmp_path / "exact"
    shutil.copytree(built, exact, ignore=shutil.ignore_patterns("corpus", "*.json"))
    record(str(exact), STEPS, ["--top-k", str(gm.VOCAB)])
    for model in ("step", "step_int8"):
        _, k64 = corpus(built, model)
        _, full = check(str(exact), model, "--corpus", str(exact / "corpus"))
        assert full["corpus"]["max_kl_tail_bound"] == 0 and full["corpus"]["max_tail_mass"] < 1e-6
        for a, b in zip(k64["corpus"]["rows"], full["corpus"]["rows"]):
            for s, t in zip(a["steps"], b["steps"]):
                assert s["kl"] <= t["kl"] * (1 + 1e-6) + 1e-15  # float64 sums: 1e-16 is rounding
                assert t["kl"] <= s["kl"] + s["kl_tail_bound"] + 1e-15
                assert (s["agree"], s["rank"], s["ort_token"]) == (t["agree"], t["rank"], t["ort_token"])


def test_prompts_and_a_factory_record_the_corpus_first(built):
    r, data = check(built, "step", "--prompts", os.path.join(built, "prompts.jsonl"), "--torch-model",
                    "gen_models:llama_step", "--generate", str(STEPS), "--output-names", ",".join(gm.LLAMA_OUTPUTS))
    assert r.returncode == 0, r.stdout + r.stderr
    _, recorded = corpus(built, "step")
    for key in ("kl", "rank", "prompts_agreeing", "steps_judged"):
        assert data["corpus"][key] == recorded["corpus"][key]


def test_bad_input_is_one_line_and_exit_2(built, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(os.path.join(built, "corpus"), bad)
    manifest = json.loads((bad / "corpus.json").read_text())
    (bad / "corpus.json").write_text(json.dumps(dict(manifest, top_k=0)))
    r, _ = check(built, "step", "--corpus", str(bad))
    assert r.returncode == 2 and "top_k: 0 is not in [1, " in r.stderr and r.stderr.count("\n") == 1, r.stderr
    (bad / "corpus.json").write_text(json.dumps(manifest))
    np.save(bad / "tokens.npy", np.full((PROMPTS, STEPS), gm.VOCAB, np.int64))
    r, _ = check(built, "step", "--corpus", str(bad))
    assert r.returncode == 2 and f"tokens.npy: token id {gm.VOCAB} is not in [0, {gm.VOCAB})" in r.stderr
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"input_ids": [1, 2, 999]}\n')
    r, _ = check(built, "step", "--prompts", str(prompts), "--torch-model", "gen_models:llama_step",
                 "--output-names", ",".join(gm.LLAMA_OUTPUTS))
    assert r.returncode == 2 and "token id 999 is not below the vocabulary (256)" in r.stderr, r.stderr
    r, _ = check(built, "step", "--corpus", os.path.join(built, "corpus"), "--torch", built)
    assert r.returncode == 2 and "--corpus and --prompts judge a prompt corpus" in r.stderr


@pytest.mark.ray
def test_the_ray_engine_gives_the_local_engines_numbers(built):
    pytest.importorskip("ray")
    short = tempfile.mkdtemp(prefix="pr", dir="/tmp")  # Ray's socket paths must stay short
    env = dict(CHILD_ENV, PARITY_PYTHON=sys.executable, TMPDIR=short)
    try:
        r, ray = corpus(built, "step_int8", "--engine", "ray", "--ray-actors", "2", env=env)
    finally:
        subprocess.run(["rm", "-rf", short])
    assert r.returncode == 1, r.stdout + r.stderr[-3000:]
    assert f"parity: ray: {PROMPTS}/{PROMPTS} entries done" in r.stderr  # progress on the console
    _, local = corpus(built, "step_int8")
    assert ray["engine"] == "ray" and local["engine"] == "local"
    a, b = ray["corpus"], local["corpus"]
    for d in (a, b):
        d.pop("ort_ms")
        for row in d["rows"]:
            row.pop("ort_ms", None)
    assert a == b
