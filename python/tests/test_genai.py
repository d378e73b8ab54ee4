"""check PACKAGE_DIR (issue 52 item 4, docs/generation.md "ORT GenAI
packages"): an ORT GenAI package made offline by onnxruntime-genai's model
builder from the Llama step of gen_models (seeded weights; genai_build.py) is
run by the GenAI runtime's own loop (og.Generator) over a prompt corpus and
judged against the PyTorch model it was built from: teacher-forced KL, top
token and rank per step, and the free-running tokens of the runtime's own
search. A planted weight fault (x1.01 in the package's model.onnx) and a
planted search fault (genai_config.json's repetition_penalty) fail; their
healthy twins (the same package re-saved, the builder's own search) pass."""

import json
import os
import shutil
import subprocess

import pytest

from parity_binary import PARITY, REPO, needs_parity

pytest.importorskip("transformers")
og = pytest.importorskip("onnxruntime_genai")
from corpus_build import write_prompts  # noqa: E402
from genai_build import OFFLINE_ENV, build  # noqa: E402
import gen_models as gm  # noqa: E402

pytestmark = needs_parity
PROMPTS, STEPS = 6, 12
FAULT = "model.layers.1.attn.o_proj.MatMul.weight"
MAX_LENGTH = 14  # below the longest prompt (12 tokens) + STEPS
TORCH = ["--torch-model", "gen_models:llama_step", "--output-names", ",".join(gm.LLAMA_OUTPUTS)]


def resave(package, out, name=None, edit=None):
    """The package with its model.onnx loaded and saved again (external data
    kept), initializer `name` replaced by edit(its value) when given."""
    import onnx
    from onnx import numpy_helper
    shutil.copytree(package, out, ignore=shutil.ignore_patterns("model.onnx", "model.onnx.data"))
    model = onnx.load(os.path.join(package, "model.onnx"))
    inits = {i.name: i for i in model.graph.initializer}
    if name is not None:
        inits[name].CopyFrom(numpy_helper.from_array(edit(numpy_helper.to_array(inits[name])), name))
    onnx.save(model, os.path.join(out, "model.onnx"), save_as_external_data=True, location="model.onnx.data")
    return out


def with_search(package, out, **search):
    shutil.copytree(package, out)
    path = os.path.join(out, "genai_config.json")
    config = json.load(open(path))
    config["search"].update(search)
    json.dump(config, open(path, "w"), indent=4)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("genai"))
    package = build(out, "llama")
    write_prompts(os.path.join(out, "prompts.jsonl"), PROMPTS)
    resave(package, os.path.join(out, "twin"))
    resave(package, os.path.join(out, "o_proj_x101"), FAULT, lambda w: w * 1.01)
    with_search(package, os.path.join(out, "penalty"), repetition_penalty=1.5)
    with_search(package, os.path.join(out, "short"), max_length=MAX_LENGTH)
    with_search(package, os.path.join(out, "sampling"), do_sample=True, temperature=0.7)
    return out


def check(built, package, *extra, env=None):
    out = os.path.join(built, "last.json")
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([PARITY, "check", os.path.join(built, package), "--json", out, *extra],
                       capture_output=True, text=True, env=env or OFFLINE_ENV, timeout=600)
    return r, (json.load(open(out)) if os.path.exists(out) else None)


@pytest.fixture(scope="module")
def recorded(built):
    """The healthy package checked from the prompts (the corpus recorded from
    PyTorch first) and the corpus kept for the other checks."""
    r, data = check(built, "package", "--prompts", os.path.join(built, "prompts.jsonl"), *TORCH,
                    "--generate", str(STEPS), "--report", os.path.join(built, "rep"))
    subprocess.run([os.path.join(REPO, ".venv", "bin", "python"), "-m", "parity.torch", "corpus",
                    "gen_models:llama_step", "--prompts", os.path.join(built, "prompts.jsonl"), "--generate",
                    str(STEPS), "--output-names", ",".join(gm.LLAMA_OUTPUTS), "-o", os.path.join(built, "corpus"),
                    "--quiet"], check=True, env=OFFLINE_ENV)
    return r, data


def corpus(built, package, *extra, **kw):
    return check(built, package, "--corpus", os.path.join(built, "corpus"), *extra, **kw)


def validate(data):
    import jsonschema
    schema = json.load(open(os.path.join(REPO, "docs", "report.schema.json")))
    jsonschema.validate(data, {**schema, "$ref": "#/$defs/corpus_report", "required": [], "properties": {}})


def test_a_healthy_package_passes_against_the_pytorch_model_it_was_built_from(built, recorded):
    r, data = recorded
    assert r.returncode == 0, r.stdout + r.stderr
    validate(data)
    c, g = data["corpus"], data["genai"]
    assert c["prompts"] == PROMPTS and c["steps_judged"] == PROMPTS * STEPS
    assert c["kl"]["max"] < 1e-13 and c["kl"]["max"] <= c["kl_tolerance"]  # measured 1.9e-15
    assert c["share_agreeing"] == 1 and c["rank"]["max"] == 1 and c["prompts_free_running_departing"] == 0
    for row in c["rows"]:  # the runtime's own greedy search gives PyTorch's tokens
        assert row["free_running_divergent_step"] is None and row["free_running_steps"] == STEPS
    config = os.path.join(built, "package", "genai_config.json")
    assert g["genai_config"] == config and data["config"] == config
    given = json.load(open(config))
    assert g["search"] == given["search"] and g["greedy"] is True
    assert g["session_options"] == given["model"]["decoder"]["session_options"]
    assert g["onnxruntime_genai_version"] == og.__version__
    assert f"ORT GenAI package: {config}" in r.stdout and "corpus: PASS" in r.stdout
    assert "genai_config.json" in open(os.path.join(built, "rep", "report.html")).read()


def test_a_weight_x1_01_in_the_package_fails_and_its_resaved_twin_passes(built, recorded):
    _, healthy = recorded
    r, twin = corpus(built, "twin")
    assert r.returncode == 0, r.stdout + r.stderr
    assert twin["corpus"]["kl"] == healthy["corpus"]["kl"]  # the same numbers as the package itself
    r, data = corpus(built, "o_proj_x101")
    assert r.returncode == 1, r.stdout + r.stderr
    validate(data)
    c = data["corpus"]
    assert c["kl"]["median"] > 1000 * healthy["corpus"]["kl"]["max"], (c["kl"], healthy["corpus"]["kl"])
    assert c["prompts_failing"] > 0 and c["prompt_max_kl"]["median"] > c["kl_tolerance"]
    for row in c["rows"]:  # the runtime's own loop leaves PyTorch's tokens where its logits do
        assert row["free_running_divergent_step"] == row["first_divergent_step"]
    assert data["genai"]["genai_config"].endswith(os.path.join("o_proj_x101", "genai_config.json"))
    assert "corpus: FAIL" in r.stdout


def test_a_search_option_that_drifts_from_greedy_fails_on_the_free_run_alone(built, recorded):
    """genai_config.json's repetition_penalty 1.5: the logits are the
    model's (teacher-forced KL as healthy, every top token agrees) but the
    runtime's own search picks other tokens."""
    _, healthy = recorded
    r, data = corpus(built, "penalty")
    assert r.returncode == 1, r.stdout + r.stderr
    c = data["corpus"]
    assert c["kl"] == healthy["corpus"]["kl"] and c["share_agreeing"] == 1
    assert c["prompts_free_running_departing"] > 0
    assert data["genai"]["search"]["repetition_penalty"] == 1.5
    assert "the free run leaves PyTorch's tokens at step" in r.stdout
    # A sampling search is not PyTorch's greedy decode: its free run is not
    # judged (and said so); its logits are, and they are the model's.
    r, data = corpus(built, "sampling")
    assert r.returncode == 0, r.stdout + r.stderr
    assert data["genai"]["greedy"] is False and data["corpus"]["kl"] == healthy["corpus"]["kl"]
    assert all(row["free_running_steps"] is None for row in data["corpus"]["rows"])
    assert "free-running: not judged" in r.stdout


def test_a_max_length_below_the_corpus_fails_each_prompt_at_the_step_it_cuts(built, recorded):
    """genai_config.json's max_length 14: the runtime refuses to append past
    it, so a prompt of L tokens gets 14 - L + 1 steps, each judged (KL as
    healthy), and fails with the runtime's message."""
    r, data = corpus(built, "short")
    assert r.returncode == 1, r.stdout + r.stderr
    c = data["corpus"]
    assert c["prompts_errored"] == PROMPTS and c["kl"]["max"] < 1e-13
    for row in c["rows"]:
        assert len(row["steps"]) == MAX_LENGTH - row["prompt_length"] + 1, row
        assert f"exceeds max length ({MAX_LENGTH})" in row["error"] and row["status"] == "FAIL"


def one_line_exit_2(r, text):
    assert r.returncode == 2 and text in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr


def test_bad_input_is_one_line_and_exit_2(built, recorded, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(os.path.join(built, "package"), bad)
    os.remove(bad / "genai_config.json")
    one_line_exit_2(corpus(built, bad)[0], "a folder without genai_config.json is not an ORT GenAI package")
    (bad / "genai_config.json").write_text("{not json")
    one_line_exit_2(corpus(built, bad)[0], "genai_config.json: not a JSON object")
    shutil.copy(os.path.join(built, "package", "genai_config.json"), bad / "genai_config.json")
    os.remove(bad / "model.onnx")
    one_line_exit_2(corpus(built, bad)[0], "model.decoder.filename names")
    (bad / "model.onnx").write_bytes(b"not a model")
    one_line_exit_2(corpus(built, bad)[0], "onnxruntime-genai cannot load the package")
    shadow = tmp_path / "shadow" / "onnxruntime_genai"  # a Python where it cannot be imported
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no onnxruntime-genai here')\n")
    env = dict(OFFLINE_ENV, PYTHONPATH=f"{shadow.parent}{os.pathsep}{OFFLINE_ENV['PYTHONPATH']}")
    one_line_exit_2(corpus(built, "package", env=env)[0], "onnxruntime-genai is not importable")
    one_line_exit_2(corpus(built, "package", "--engine", "ray")[0], "runs on the local engine")
    one_line_exit_2(check(built, "package")[0], "an ORT GenAI package is checked over prompts: give --prompts")


QWEN2_BIAS = "model.layers.1.attn.qkv_proj.Add.bias"


def test_a_qwen2_package_passes_and_the_same_package_without_a_bias_fails(tmp_path_factory):
    """A second family: Qwen2 (q/k/v projections with a bias, seeded). The
    builder's package passes; with layer 1's fused q/k/v bias zeroed (a
    package that drops what the Hugging Face model has) it fails."""
    out = str(tmp_path_factory.mktemp("qwen2"))
    package = build(out, "qwen2")
    write_prompts(os.path.join(out, "prompts.jsonl"), PROMPTS)
    resave(package, os.path.join(out, "no_bias"), QWEN2_BIAS, lambda b: b * 0)
    torch = ["--prompts", os.path.join(out, "prompts.jsonl"), "--torch-model", "genai_models:qwen2_step",
             "--output-names", ",".join(gm.LLAMA_OUTPUTS), "--generate", str(STEPS)]
    r, healthy = check(out, "package", *torch)
    assert r.returncode == 0, r.stdout + r.stderr
    h = healthy["corpus"]
    assert h["kl"]["max"] < 1e-13 and h["share_agreeing"] == 1 and h["prompts_free_running_departing"] == 0
    r, data = check(out, "no_bias", *torch)
    assert r.returncode == 1, r.stdout + r.stderr
    c = data["corpus"]
    assert c["kl"]["median"] > 1000 * h["kl"]["max"] and c["prompts_failing"] == PROMPTS, c["kl"]
    assert c["share_agreeing"] < 1  # measured: 0 of 6 prompts agree throughout, 42 of 72 steps
    for row in c["rows"]:  # the runtime's own loop leaves PyTorch's tokens where its logits do
        assert row["free_running_divergent_step"] == row["first_divergent_step"]
