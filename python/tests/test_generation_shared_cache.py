"""Deployed cache forms (issue 52 item 3, docs/generation.md "Deployed cache
forms"): the generation stage's loop served as ORT serves it, with IO
binding (`--cache-form bound`) and with past and present one buffer of the
maximum length written in place (`--cache-form shared`, ORT GenAI's
`past_present_share_buffer`; auto-detected on a graph whose past and present
are declared alike with a static length). The step models
(shared_cache_models.py) write their caches with ScatterElements at
position_ids; the planted faults write one position on (offby1), read one
position not yet written (readbeyond), or make a present one position short;
a com.microsoft GroupQueryAttention step (as the ORT GenAI model builder
emits) writes the shared buffers itself, and its planted fault is the
seqlens_k convention off by one."""

import json
import os
import subprocess

import pytest

from parity_binary import PARITY, needs_parity

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
import shared_cache_models as scm  # noqa: E402
from gen_build import dump_here  # noqa: E402

pytestmark = needs_parity
STEPS = 8


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    out = tmp_path_factory.mktemp("shared_cache")
    model = scm.shared_step()
    for fault in (None, *scm.FAULTS):
        scm.build_onnx(model, str(out / f"step_{fault or 'healthy'}.onnx"), fault)
    gqa = scm.gqa_step()
    scm.build_gqa_onnx(gqa, str(out / "step_gqa.onnx"))
    scm.build_gqa_onnx(gqa, str(out / "step_gqa_seqlens.onnx"), "seqlens")
    scm.build_onnx(scm.small_shared_step(), str(out / "step_small.onnx"))
    for factory, dump in (("shared_step", "dump"), ("gqa_step", "gqa_dump"), ("small_shared_step", "small_dump")):
        dump_here("dump", f"shared_cache_models:{factory}", "--generate", str(STEPS), "--sizes", "none", "-o",
                  str(out / dump), "--force", "--output-names", ",".join(scm.OUTPUTS))
    return out


def _check(out, which, report, *argv):
    dump = out / ("gqa_dump" if which.startswith("gqa") else "small_dump" if which == "small" else "dump")
    p = subprocess.run([PARITY, "check", str(out / f"step_{which}.onnx"), "--torch", str(dump), "--report",
                        str(report), "--no-locate", *argv], capture_output=True, text=True)
    assert p.returncode in (0, 1), p.stdout + p.stderr  # a verdict, never a crash or bad input
    with open(report / "report.json") as f:
        g = json.load(f)["generation"]
    return p, g, {c["id"]: c for c in g["checks"]}


def test_a_healthy_shared_buffer_step_passes_with_no_cache_finding(shared, tmp_path):
    p, g, checks = _check(shared, "healthy", tmp_path / "rep")
    assert p.returncode == 0 and g["status"] == "PASS", p.stdout
    assert checks["cache_form"]["status"] == "PASS", checks
    assert checks["cache_form"]["message"].startswith("shared past/present buffers [1, 2, 16, 16] (16 positions)")
    assert checks["cache_write"]["status"] == "PASS" and checks["cache_read"]["status"] == "PASS", checks
    assert g["tokens_agreeing"] == STEPS


def test_the_fresh_form_of_the_same_step_gives_the_same_tokens(shared, tmp_path):
    p, g, checks = _check(shared, "healthy", tmp_path / "rep", "--cache-form", "fresh")
    assert p.returncode == 0 and g["tokens_agreeing"] == STEPS, p.stdout
    assert "cache_form" not in checks  # fresh buffers: nothing bound


def test_an_off_by_one_cache_write_fails_naming_the_step_and_tensor(shared, tmp_path):
    p, g, checks = _check(shared, "offby1", tmp_path / "rep")
    assert p.returncode == 1 and g["status"] == "FAIL", p.stdout
    write = checks["cache_write"]
    assert write["status"] == "FAIL", checks
    # the prompt (positions 0..4) written one on: 1..5, position 0 never written
    assert write["message"].startswith("step 0 wrote present_key_1 at position 5, expected 0..4 (left as it was: 0)")
    assert write["message"].endswith(f"({STEPS} of {STEPS} steps)"), write
    # and the step then reads the position it left unwritten
    assert checks["cache_read"]["status"] == "FAIL" and "step 0 reads present_key_1 beyond" in \
        checks["cache_read"]["message"], checks["cache_read"]


def test_a_read_beyond_what_was_written_is_caught(shared, tmp_path):
    p, g, checks = _check(shared, "readbeyond", tmp_path / "rep")
    assert p.returncode == 1, p.stdout
    assert checks["cache_write"]["status"] == "PASS", checks  # it writes where it should
    read = checks["cache_read"]
    assert read["status"] == "FAIL", checks
    assert read["message"].startswith("step 0 reads present_key_0, present_value_0 beyond what was written"), read


def test_a_group_query_attention_step_writes_its_shared_buffers_in_place(shared, tmp_path):
    p, g, checks = _check(shared, "gqa", tmp_path / "rep")
    assert p.returncode == 0 and g["tokens_agreeing"] == STEPS, p.stdout
    assert [checks[c]["status"] for c in ("cache_form", "cache_write", "cache_read")] == ["PASS"] * 3, checks


def test_a_seqlens_off_by_one_in_group_query_attention_is_named_at_its_step(shared, tmp_path):
    p, g, checks = _check(shared, "gqa_seqlens", tmp_path / "rep")
    assert p.returncode == 1, p.stdout
    # the prompt is written right; from step 1 each token lands one position on
    assert checks["cache_write"]["message"] == \
        f"step 1 wrote present_key_0 at position 6, expected 5 (left as it was: 5) ({STEPS - 1} of {STEPS} steps)"
    assert checks["cache_read"]["message"].startswith("step 1 reads present_key_0, present_value_0, present_key_1, "
                                                      "present_value_1 beyond what was written"), checks["cache_read"]


def test_a_buffer_sized_wrong_is_a_finding_not_a_crash(shared, tmp_path):
    # present_key_0 one position short, run shared: refused before any step
    p, g, checks = _check(shared, "short", tmp_path / "short", "--cache-form", "shared")
    assert p.returncode == 1 and checks["cache_form"]["status"] == "FAIL", p.stdout
    assert checks["cache_form"]["message"].startswith(
        "present_key_0 is declared [1, 2, 15, 16] where the shared cache form needs past_key_0's [1, 2, 16, 16]")
    # buffers of 8 positions for a loop that writes 12: refused before any step
    p, g, checks = _check(shared, "small", tmp_path / "small")
    assert p.returncode == 1 and checks["cache_form"]["message"] == (
        "the loop writes positions up to 11 (8 steps after position 4) but past_key_0's shared buffer holds 8 "
        "positions: it is sized too small for this generation"), checks
    # the shared step bound with presents one step longer than their pasts: ORT cannot write them
    p, g, checks = _check(shared, "healthy", tmp_path / "bound", "--cache-form", "bound")
    assert p.returncode == 1 and checks["cache_form"]["status"] == "FAIL", p.stdout
    assert checks["cache_form"]["message"].startswith("step 0: a present does not fit present buffers"), checks
    assert "present_key_0" in checks["cache_form"]["message"]


def test_an_unknown_cache_form_is_one_line_and_exit_2(shared):
    p = subprocess.run([PARITY, "check", str(shared / "step_healthy.onnx"), "--torch", str(shared / "dump"),
                        "--cache-form", "pinned"], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.strip() == \
        "parity: error: --cache-form pinned: expected auto, fresh, bound or shared", p.stderr
