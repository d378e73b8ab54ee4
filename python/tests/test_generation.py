"""The decode loop checked step by step against PyTorch (issue 42,
docs/generation.md): `python -m parity.torch dump --generate N` records
PyTorch's greedy decode of a tiny transformers Llama step with an explicit
KV cache; `parity check STEP.onnx --torch DUMP` replays it on ONNX Runtime.
The healthy dynamo export gives 16/16 tokens and passes; the same export
with one attention projection's weight x1.02 fails (its logits and caches
leave the tolerance even where its tokens agree); a Whisper-like encoder +
decoder step passes with its encoder's outputs (the cross-attention caches)
fed to the steps."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from parity_binary import PARITY, needs_parity

pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")
from gen_build import STEPS, build_llama, build_llama_prompt, build_whisper, dump_torch  # noqa: E402
from parity.torch.kv_names import find_kv_pairs, parse_kv_map  # noqa: E402


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gen_llama"))
    build_llama(out)
    return out


@pytest.fixture(scope="module")
def whisper(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gen_whisper"))
    build_whisper(out)
    return out


def _check(model, dump, report, *extra):
    p = subprocess.run([PARITY, "check", model, "--torch", dump, "--report", report, "--no-locate", *extra],
                       capture_output=True, text=True)
    with open(os.path.join(report, "report.json")) as f:
        return p, json.load(f)


def test_cache_names_pair_by_layer_and_kind():
    ins = ["input_ids", "past_key_values.0.key", "past_key_values.0.value", "past_key_values.1.key", "cache_position"]
    outs = ["logits", "present.1.key", "present.0.value", "present.0.key"]
    assert find_kv_pairs(ins, outs) == [("present.0.key", "past_key_values.0.key"),
                                        ("present.0.value", "past_key_values.0.value"),
                                        ("present.1.key", "past_key_values.1.key")]
    # self and cross caches of one layer are told apart
    assert find_kv_pairs(["past_key_0", "past_key_cross_0"], ["present_key_cross_0", "present_key_0"]) == [
        ("present_key_0", "past_key_0"), ("present_key_cross_0", "past_key_cross_0")]
    assert parse_kv_map("o1=i1", ["i1"], ["o1"]) == [("o1", "i1")]
    with pytest.raises(ValueError, match="no output 'nope'"):
        parse_kv_map("nope=i1", ["i1"], ["o1"])


def test_dump_records_the_greedy_decode(llama):
    with open(os.path.join(llama, "dump", "manifest.json")) as f:
        g = json.load(f)["generation"]
    assert g["length"] == STEPS and len(g["steps"]) == STEPS and g["prompt_length"] == 6
    assert [p["past"] for p in g["kv_map"]] == ["past_key_0", "past_value_0", "past_key_1", "past_value_1"]
    # each step's input is the previous step's token
    for a, b in zip(g["steps"], g["steps"][1:]):
        assert b["input_ids"] == [[a["tokens"][0]]]
    last = np.load(os.path.join(llama, "dump", g["steps"][3]["logits"]))
    assert int(last.argmax()) == g["steps"][3]["tokens"][0]
    # the cache grows one token a step
    assert g["steps"][5]["presents"]["present_key_0"]["shape"][2] == 6 + 5
    assert g["stepwise"] is not None


@needs_parity
def test_healthy_llama_decode_passes_16_of_16(llama, tmp_path):
    p, r = _check(os.path.join(llama, "step.onnx"), os.path.join(llama, "dump"), str(tmp_path / "rep"))
    g = r["generation"]
    assert g is not None, p.stdout + p.stderr
    assert g["tokens_agreeing"] == STEPS and g["first_differing_step"] is None, p.stdout
    assert g["status"] == "PASS" and r["stages"]["generation"]["status"] == "PASS", p.stdout
    assert all(s["logits"]["status"] == "pass" and s["cache"]["status"] == "pass" for s in g["steps"]), p.stdout
    assert {c["id"]: c["status"] for c in g["checks"]} == {
        "present_starts_with_past": "PASS", "prefill_equals_stepwise": "PASS", "torch_prefill_equals_stepwise": "PASS"}
    assert p.returncode == 0, p.stdout + p.stderr
    assert "generation: PASS 16/16 tokens agree" in p.stdout
    html = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="generation"' in html and "<polyline class=\"error\"" in html


@needs_parity
def test_planted_weight_fails_the_decode_check(llama, tmp_path):
    p, r = _check(os.path.join(llama, "step_vproj.onnx"), os.path.join(llama, "dump"), str(tmp_path / "rep"))
    g = r["generation"]
    assert g["status"] == "FAIL" and p.returncode == 1, p.stdout + p.stderr
    # the logits or the caches leave the tolerance at the first step already
    first = g["steps"][0]
    assert first["logits"]["status"] == "fail" or first["cache"]["status"] == "fail", first
    assert first["cache"]["worst"].startswith("present_value_1"), first
    assert g["first_failing_logits_step"] is not None or g["first_differing_step"] is not None


@pytest.fixture(scope="module")
def llama_prompts(llama):
    """Three dumps of the healthy Llama step's decode, one prompt each (seeds 0, 1, 2)."""
    return [os.path.join(llama, "dump")] + [build_llama_prompt(llama, seed) for seed in (1, 2)]


@needs_parity
def test_many_prompts_give_the_token_agreement_distribution(llama, llama_prompts, tmp_path):
    first_ids = []
    for d in llama_prompts:
        with open(os.path.join(d, "manifest.json")) as f:
            first_ids.append(json.load(f)["generation"]["steps"][0]["input_ids"])
    assert first_ids[0] != first_ids[1] and first_ids[1] != first_ids[2], "three different prompts"
    more = [a for d in llama_prompts[1:] for a in ("--torch", d)]
    p, r = _check(os.path.join(llama, "step.onnx"), llama_prompts[0], str(tmp_path / "ok"), *more)
    prompts = r["generation_prompts"]
    assert [q["dump"] for q in prompts] == llama_prompts, p.stdout + p.stderr
    assert all(q["status"] == "PASS" and q["tokens_agreeing"] == STEPS and q["first_differing_step"] is None
               for q in prompts), prompts
    found = {f["id"]: f for f in r["stages"]["generation"]["findings"]}
    assert found["generation.prompts"]["status"] == "PASS", found
    assert "3 prompts: 3 give PyTorch's tokens at every step" in found["generation.prompts"]["message"]
    assert p.returncode == 0 and "prompts: 3 of 3 pass" in p.stdout, p.stdout + p.stderr
    assert 'id="generation-prompts"' in (tmp_path / "ok" / "report.html").read_text()

    # The planted weight: every prompt's loop is judged, and the finding fails naming the worst.
    p, r = _check(os.path.join(llama, "step_vproj.onnx"), llama_prompts[0], str(tmp_path / "bad"), *more)
    prompts = r["generation_prompts"]
    failed = [q for q in prompts if q["status"] == "FAIL"]
    assert len(prompts) == 3 and prompts[0]["status"] == "FAIL", prompts
    found = {f["id"]: f for f in r["stages"]["generation"]["findings"]}
    assert found["generation.prompts"]["status"] == "FAIL", found
    assert f"{len(failed)} fail; the worst, " in found["generation.prompts"]["message"], found
    assert p.returncode == 1 and f"prompts: {3 - len(failed)} of 3 pass" in p.stdout, p.stdout


@needs_parity
def test_whisper_like_encoder_decoder_passes(whisper, tmp_path):
    p, r = _check(os.path.join(whisper, "step.onnx"), os.path.join(whisper, "dump"), str(tmp_path / "rep"),
                  "--encoder", os.path.join(whisper, "encoder.onnx"))
    g = r["generation"]
    assert g is not None, p.stdout + p.stderr
    checks = {c["id"]: c["status"] for c in g["checks"]}
    assert checks["encoder.present_key_cross_0"] == "PASS" and checks["encoder.present_value_cross_0"] == "PASS", checks
    assert g["tokens_agreeing"] == STEPS and g["status"] == "PASS", p.stdout
    assert p.returncode == 0, p.stdout + p.stderr


@needs_parity
def test_an_older_dump_still_checks_without_a_generation(llama, tmp_path):
    dump = tmp_path / "old"
    subprocess.run(["cp", "-r", os.path.join(llama, "dump"), str(dump)], check=True)
    m = json.loads((dump / "manifest.json").read_text())
    del m["generation"]
    (dump / "manifest.json").write_text(json.dumps(m))
    p, r = _check(os.path.join(llama, "step.onnx"), str(dump), str(tmp_path / "rep"))
    assert r["generation"] is None and "generation" not in r["stages"], p.stdout
    assert p.returncode in (0, 1) and "generation:" not in p.stdout


def test_bad_kv_map_is_one_line_and_exit_2(tmp_path):
    p = dump_torch("llama_step", "--generate", "2", "--kv-map", "present_key_9=past_key_0", "-o", str(tmp_path / "d"),
                   check=False)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "no output 'present_key_9'" in p.stderr, p.stderr
    assert not (tmp_path / "d" / "manifest.json").exists()


@needs_parity
def test_missing_encoder_is_exit_2(llama, tmp_path):
    p = subprocess.run([PARITY, "check", os.path.join(llama, "step.onnx"), "--torch", os.path.join(llama, "dump"),
                        "--encoder", str(tmp_path / "nope.onnx")], capture_output=True, text=True)
    assert p.returncode == 2 and "--encoder" in p.stderr, p.stderr


@needs_parity
def test_locate_at_the_departing_step_names_the_planted_module(llama, tmp_path):
    from gen_models import LLAMA_FAULT, LLAMA_OUTPUTS
    dump = tmp_path / "step3"
    dump_torch("llama_step", "--at-step", "3", "--output-names", ",".join(LLAMA_OUTPUTS), "-o", str(dump))
    with open(os.path.join(llama, "dump", "manifest.json")) as f:
        g = json.load(f)["generation"]
    ids = np.load(dump / "input_input_ids.npy")
    assert ids.tolist() == g["steps"][3]["input_ids"]  # PyTorch's inputs at step 3
    assert np.load(dump / "input_past_key_0.npy").shape[2] == 6 + 2
    out = tmp_path / "locate.json"
    p = subprocess.run([PARITY, "locate", os.path.join(llama, "step_vproj.onnx"), "--reference", f"torch:{dump}",
                        "--json", str(out)], capture_output=True, text=True)
    assert p.returncode == 1, p.stdout + p.stderr
    first = json.loads(out.read_text())["first_divergence"]
    assert first["module"] == LLAMA_FAULT, first


@needs_parity
def test_caches_past_the_limit_are_statistics_and_go_unchecked(llama, tmp_path):
    from gen_models import LLAMA_OUTPUTS
    dump = tmp_path / "stats"
    dump_torch("llama_step", "--generate", "3", "--cache-limit", "0", "--output-names", ",".join(LLAMA_OUTPUTS),
               "-o", str(dump))
    g = json.loads((dump / "manifest.json").read_text())["generation"]
    present = g["steps"][1]["presents"]["present_key_0"]
    assert present["file"] is None and present["shape"] == [1, 2, 7, 16] and "mean" in present
    p, r = _check(os.path.join(llama, "step.onnx"), str(dump), str(tmp_path / "rep"))
    steps = r["generation"]["steps"]
    assert [s["cache"]["status"] for s in steps] == ["unchecked"] * 3 and r["generation"]["status"] == "PASS", p.stdout


def _cache_that_stops_growing(step, out):
    """The step model with present_key_0 cut one position short along its
    sequence axis: a cache that does not grow with the step's token."""
    import onnx
    from onnx import helper as h, numpy_helper
    m = onnx.load(step)
    g = m.graph
    producer = next(n for n in g.node if "present_key_0" in n.output)
    producer.output[list(producer.output).index("present_key_0")] = "present_key_0_whole"
    for n in g.node:  # the attention still reads the whole cache; only the output is cut
        for i, name in enumerate(n.input):
            if name == "present_key_0":
                n.input[i] = "present_key_0_whole"
    g.initializer.extend([numpy_helper.from_array(np.array([0], np.int64), "cut_starts"),
                          numpy_helper.from_array(np.array([-1], np.int64), "cut_ends"),
                          numpy_helper.from_array(np.array([2], np.int64), "cut_axes")])
    g.node.append(h.make_node("Slice", ["present_key_0_whole", "cut_starts", "cut_ends", "cut_axes"],
                              ["present_key_0"], name="cut_cache"))
    onnx.save(m, out)
    return out


# Issue 51 item 6: a cache that stops growing is named by its shapes, and a
# failing prompt says why at a step that exists.
@needs_parity
def test_a_cache_that_stops_growing_is_named_by_its_shapes(llama, tmp_path):
    model = _cache_that_stops_growing(os.path.join(llama, "step.onnx"), str(tmp_path / "cut.onnx"))
    p, r = _check(model, os.path.join(llama, "dump"), str(tmp_path / "rep"))
    g = r["generation"]
    assert g["status"] == "FAIL" and p.returncode == 1, p.stdout + p.stderr
    checks = {c["id"]: c for c in g["checks"]}
    assert checks["present_shape"]["status"] == "FAIL", checks
    message = checks["present_shape"]["message"]
    assert message.startswith("step 0: present_key_0 is [") and "where PyTorch's is [" in message, message
    assert g["first_failing_cache_step"] == 0, g["first_failing_cache_step"]
    assert g["steps"][0]["cache"]["status"] == "fail", g["steps"][0]
