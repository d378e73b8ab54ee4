"""A malformed generation record is bad input (issue 56 class 8,
docs/generation.md): every field of a dump's `generation` record is checked
before it is used, so `parity check STEP.onnx --torch DUMP` ends with one line
naming the field and exit 2, where it was a FAIL (exit 1) or accepted (a
negative or uint64 length, steps out of order, a negative token id), and a
padded manifest of 100,000 steps is refused at once (it ran for more than
29 minutes and 7.6 GB before)."""

import copy
import json
import os
import shutil
import subprocess
import time

import pytest

from parity_binary import PARITY, needs_parity

pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")
from gen_build import build_llama  # noqa: E402


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("gen_records"))
    build_llama(out, exporter="torchscript")
    return out


def _variant(llama, tmp_path, name, edit):
    dump = tmp_path / name
    shutil.copytree(os.path.join(llama, "dump"), dump)
    with open(dump / "manifest.json") as f:
        m = json.load(f)
    edit(m["generation"])
    (dump / "manifest.json").write_text(json.dumps(m))
    return dump


def _check(llama, dump, tmp_path):
    return subprocess.run([PARITY, "check", os.path.join(llama, "step.onnx"), "--torch", str(dump), "--no-locate",
                           "--json", str(tmp_path / "r.json")], capture_output=True, text=True)


def _set(key, value):
    return lambda g: g.__setitem__(key, value)


def _step(i, key, value):
    return lambda g: g["steps"][i].__setitem__(key, value)


CASES = [
    ("length_negative", _set("length", -1), "generation.length: -1 is not in [1, 65536]"),
    ("length_uint64", _set("length", 2**64 - 1), "generation.length: 18446744073709551615 is not in"),
    ("length_more_than_steps", _set("length", 1000), "generation.steps: 16 steps for a length of 1000"),
    ("prompt_negative", _set("prompt_length", -5), "generation.prompt_length: -5 is not in"),
    ("prompt_not_the_dumps", _set("prompt_length", 4), "generation.prompt_length: the dump's 'input_ids' is [1, 6]"),
    ("no_steps", _set("steps", []), "generation.steps: 0 steps for a length of 16"),
    ("step_out_of_order", _step(3, "step", 9), "generation.steps[3].step: 9 where step 3 is due"),
    ("token_negative", _step(2, "tokens", [-1]), "generation.steps[2].tokens[0]: -1 is less than 0"),
    ("logits_missing", _step(3, "logits", "generate/nope.npy"), "generation.steps[3].logits: "),
    ("logits_of_another_shape", _step(3, "logits", "generate/step003_present_key_0.npy"),
     "generation.steps[3].logits: 'generate/step003_present_key_0.npy' holds float32 [1, 2, 9, 16]"),
    ("present_shape_negative", lambda g: g["steps"][1]["presents"]["present_key_0"].__setitem__("shape", [1, -2, 7, 16]),
     "generation.steps[1].presents.present_key_0.shape[1]: -2 is not in"),
    ("kv_present_the_model_lacks", lambda g: g["kv_map"].__setitem__(0, {"present": "nope", "past": "past_key_0"}),
     "generation.kv_map[0].present: 'nope' is no output of"),
]


@needs_parity
@pytest.mark.parametrize("name,edit,expected", CASES, ids=[c[0] for c in CASES])
def test_a_malformed_record_is_one_line_and_exit_2(llama, tmp_path, name, edit, expected):
    p = _check(llama, _variant(llama, tmp_path, name, edit), tmp_path)
    assert p.returncode == 2, p.stdout[-2000:] + p.stderr
    lines = [line for line in p.stderr.splitlines() if line.startswith("parity: error")]
    assert len(lines) == 1 and expected in lines[0], p.stderr
    assert not (tmp_path / "r.json").exists()  # no verdict, no report


@needs_parity
def test_the_untouched_record_still_passes(llama, tmp_path):
    p = _check(llama, os.path.join(llama, "dump"), tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


@needs_parity
def test_a_padded_manifest_of_100k_steps_is_refused_at_once(llama, tmp_path):
    dump = tmp_path / "padded"
    shutil.copytree(os.path.join(llama, "dump"), dump)
    with open(dump / "manifest.json") as f:
        m = json.load(f)
    g = m["generation"]
    steps = copy.deepcopy(g["steps"])
    g["steps"] = [{"step": i, "tokens": steps[i % 16]["tokens"], "logits": steps[i % 16]["logits"]}
                  for i in range(100_000)]
    g["length"] = 100_000
    text = json.dumps(m)
    (dump / "manifest.json").write_text(text + " " * (74_000_000 - len(text)))  # 74 MB, as the probe
    start = time.monotonic()
    # Through /usr/bin/time: wait4's ru_maxrss of a direct child carries this
    # (torch-sized) test process's peak across fork and exec (issue 54).
    proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", PARITY, "check", os.path.join(llama, "step.onnx"),
                           "--torch", str(dump), "--no-locate"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    wall = time.monotonic() - start
    err, measured = proc.stderr.rsplit("\n", 2)[0], proc.stderr.strip().splitlines()[-1].split()
    user, system, peak_kib = float(measured[0]), float(measured[1]), int(measured[2])
    assert proc.returncode == 2, err
    assert "generation.length: 100000 is not in [1, 65536]" in err, err
    assert user + system < 30 and wall < 120, (user, system, wall)
    assert peak_kib < 1_000_000, peak_kib  # the 74 MB manifest parsed, nothing per step
