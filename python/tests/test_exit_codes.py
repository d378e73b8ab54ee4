"""docs/errors.md's table "One exit code per kind of bad input" run cell by
cell on the real binary (issue 54): each command given each kind of bad
input exits as the table says; an exit 2 says so in one line on stderr, with
no ONNX Runtime C++ internals in it. The test reads the table itself, so the
table and the binary cannot drift apart."""

import os
import re
import subprocess

import numpy as np
import pytest

from parity_binary import PARITY, REPO, needs_parity

pytestmark = needs_parity
DOC = os.path.join(REPO, "docs", "errors.md")
TITLE = "## One exit code per kind of bad input, in every command"


def table():
    """{(kind, command): cell text} of the table under TITLE."""
    text = open(DOC, encoding="utf-8").read()
    assert TITLE in text, f"docs/errors.md lost its table '{TITLE}'"
    rows = [ln for ln in text.split(TITLE, 1)[1].split("\n## ", 1)[0].splitlines() if ln.startswith("|")]
    header = [c.strip(" `") for c in rows[0].strip("|").split("|")]
    cells = {}
    for row in rows[2:]:
        parts = [c.strip() for c in row.strip("|").split("|")]
        kind = re.match(r"`([a-z-]+)`", parts[0]).group(1)
        for command, cell in zip(header[1:], parts[1:]):
            cells[(kind, command)] = cell
    return cells


CELLS = table()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    import onnx
    from onnx import TensorProto, helper

    d = tmp_path_factory.mktemp("exit-codes")

    def relu(path, opset):
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10), path)
        return str(path)

    f = {"good": relu(d / "good.onnx", 17), "new_opset": relu(d / "new_opset.onnx", 28),
         "missing": str(d / "nope.onnx"), "garbage": str(d / "garbage.onnx"),
         "inputs": str(d / "x.npz"), "wrong_inputs": str(d / "wrong.npz"), "config": str(d / "bad_config.json"),
         "dir": d}
    with open(f["garbage"], "wb") as out:
        out.write(np.random.default_rng(0).bytes(4096))
    np.savez(f["inputs"], x=np.ones((1, 4), np.float32))
    np.savez(f["wrong_inputs"], images=np.ones((1, 4), np.float32))
    with open(f["config"], "w") as out:
        out.write('{"opt": "all", "threads_typo": 1}')
    # A PyTorch dump of a ReLU under the model's names, for align.
    torch = pytest.importorskip("torch")
    import parity.torch
    parity.torch.dump(torch.nn.ReLU(), (torch.ones(1, 4),), str(d / "dump"), input_names=["x"], output_names=["y"],
                      fp64=False)
    f["dump"] = str(d / "dump")
    return f


def args_for(command, kind, f, out):
    """The command line of `command` given the bad input `kind`."""
    model = {"model-missing": f["missing"], "not-onnx": f["garbage"], "opset-too-new": f["new_opset"]}.get(kind, f["good"])
    inputs = f["wrong_inputs"] if kind == "inputs-wrong-name" else f["inputs"]
    base = {
        "inspect": ["inspect", model],
        "run": ["run", model, "--inputs", inputs, "-o", str(out / "out.npz")],
        "check": ["check", model, "--inputs", inputs, "--runs", "1", "--warmup", "0", "--report", str(out / "r")],
        "baseline": ["baseline", model, "--inputs", inputs, "-o", str(out / "bl")],
        "locate": ["locate", model, "--inputs", inputs],
        "bench": ["bench", model, "--inputs", inputs, "--runs", "1", "--warmup", "0"],
        "align": ["align", model, "--torch", f["dump"]],
    }[command]
    if kind == "config-unknown-key":
        base += ["--config", f["config"]]
    if kind == "unknown-option":
        base += ["--no-such-option"]
    return base


@pytest.mark.parametrize("kind,command", sorted(k for k, cell in CELLS.items() if re.match(r"\d", cell)))
def test_each_command_exits_as_the_table_says(files, kind, command, tmp_path):
    cell = CELLS[(kind, command)]
    expected = int(re.match(r"\d+", cell).group(0))
    proc = subprocess.run([PARITY, *args_for(command, kind, files, tmp_path)], capture_output=True, text=True,
                          timeout=300)
    said = f"$ parity {command} ({kind}) -> {proc.returncode}\nstdout:\n{proc.stdout[-1500:]}\nstderr:\n{proc.stderr[-1500:]}"
    assert proc.returncode == expected, said
    assert "onnxruntime_src" not in proc.stdout + proc.stderr and "onnxruntime::" not in proc.stdout + proc.stderr, said
    if expected == 2:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("parity: error: "), said
    if kind == "opset-too-new":
        text = proc.stdout + proc.stderr
        assert "opset 28" in text and "its highest is" in text, said
        if command == "check":
            assert re.search(r"syntax\s+FAIL", text), said
        if command == "inspect":
            assert "runtime" in text and "error" in text, said


def test_the_table_covers_every_command_and_kind():
    kinds = {k for k, _ in CELLS}
    commands = {c for _, c in CELLS}
    assert commands == {"inspect", "run", "check", "baseline", "locate", "bench", "align"}
    assert kinds == {"model-missing", "not-onnx", "opset-too-new", "config-unknown-key", "inputs-wrong-name",
                     "unknown-option"}
