"""Issue 46, classes 3 and 10: the Ray engine's entry list and environment.

The command line hands the driver (python/parity/_ray_engine.py) its entries
as framed records, one JSON object a line with the path's bytes in hex
(src/core/worker_protocol.h): a file name holding a newline once added
an entry that read a file outside the dataset, and `\\r` or bytes that are not
UTF-8 gave a traceback. The driver refuses anything but such records (exit 2,
one line); a local cluster listens on 127.0.0.1 with its token in the
command's folder; a bad PARITY_PYTHON is one line, exit 2. The end-to-end run
on a local cluster is marked `ray`."""

import json
import os
import stat
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from parity import _ray_engine as engine
from parity_binary import PARITY, REPO, needs_parity


def record(index, path: bytes) -> bytes:
    return json.dumps({"index": index, "path_hex": path.hex()}).encode() + b"\n"


def test_records_carry_any_file_name_exactly(tmp_path):
    names = [b"/d/a\nb.npz", b"/d/c\rd.npz", b"/d/e\xff.npz", b"/d/tab\t.npz"]
    f = tmp_path / "entries.jsonl"
    f.write_bytes(b"".join(record(i, n) for i, n in enumerate(names)))
    items = engine._entries(str(f))
    assert [i["index"] for i in items] == [0, 1, 2, 3]
    assert [bytes.fromhex(json.loads(i["record"])["path_hex"]) for i in items] == names
    assert all("\n" not in i["record"] and "\r" not in i["record"] for i in items)


@pytest.mark.parametrize("text, why", [
    (record(0, b"/a") + record(0, b"/b"), "given twice"),
    (b'{"index": 0, "path_hex": "2F"}\n', "lowercase hex"),
    (b'{"index": 0, "path_hex": "2"}\n', "lowercase hex"),
    (b'{"index": 0, "path_hex": "2f00"}\n', "NUL"),
    (b'{"index": true, "path_hex": "2f"}\n', "integer"),
    (b'{"index": 1.0, "path_hex": "2f"}\n', "integer"),
    (b'{"index": -1, "path_hex": "2f"}\n', "integer"),
    (b'{"index": 18446744073709551616, "path_hex": "2f"}\n', "integer"),
    (b'{"index": 0, "path_hex": "2f", "x": 1}\n', "exactly"),
    (b'0\t/etc/passwd\n', "not a JSON record"),
    (b'{"index": 0, "path_hex": "2f"}', "not ended by a newline"),
    (b'{"index": 0, "path_hex": "\xff"}\n', "not a JSON record"),
    (b'{"index": 0, "path_hex": "' + b"61" * 9000 + b'"}\n', "longer than"),
])
def test_anything_but_records_is_refused(tmp_path, text, why):
    f = tmp_path / "entries.jsonl"
    f.write_bytes(text)
    with pytest.raises(engine.BadEntries, match=why):
        engine._entries(str(f))


def test_a_bad_entry_list_is_one_line_and_exit_2(tmp_path, capsys):
    f = tmp_path / "entries.jsonl"
    f.write_bytes(b"0\tx\ny\n")
    rc = engine.main(["--entries", str(f), "--out", str(tmp_path / "rows"), "--", "true"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "entries line 1" in err, err


def test_a_local_cluster_keeps_its_state_and_token_in_our_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    kwargs = engine._local_cluster(str(tmp_path / "ray"))
    assert kwargs["_node_ip_address"] == "127.0.0.1" and kwargs["include_dashboard"] is False
    assert kwargs["_temp_dir"] == str(tmp_path / "ray")
    assert stat.S_IMODE(os.stat(tmp_path / "ray").st_mode) == 0o700
    # Ray's token (~/.ray/auth_token, token authentication on by default) goes into our folder.
    assert os.environ["HOME"] == str(tmp_path / "ray")
    assert not (tmp_path / "home").exists()


@needs_parity
@pytest.mark.parametrize("python", ["/nonexistent/python3", "no-such-python-here"])
def test_a_bad_driver_python_is_one_line_and_exit_2(tmp_path, python):
    import onnx
    from onnx import helper, TensorProto
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), tmp_path / "m.onnx")
    (tmp_path / "data").mkdir()
    np.savez(tmp_path / "data" / "a.npz", x=np.ones((1, 4), np.float32))
    env = dict(os.environ, PARITY_PYTHON=python)
    r = subprocess.run([PARITY, "check", str(tmp_path / "m.onnx"), "--dataset", str(tmp_path / "data"),
                        "--engine", "ray"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "PARITY_PYTHON" in r.stderr, r.stderr


@needs_parity
@pytest.mark.ray
def test_hostile_file_names_run_on_ray_as_locally_with_the_checkouts_own_python(tmp_path):
    pytest.importorskip("ray")
    import onnx
    from onnx import helper, TensorProto
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), tmp_path / "m.onnx")
    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    names = [b"a\nb.npz", b"c\rd.npz", b"e\xff.npz", b"plain.npz"]
    for n in names:
        with open(os.path.join(bytes(data), n), "wb") as f:  # numpy takes str paths only
            np.savez(f, x=rng.standard_normal((1, 4)).astype(np.float32))
    # Outside the dataset, where the old newline split pointed (the cwd).
    np.savez(tmp_path / "b.npz", x=np.full((1, 4), 1e9, np.float32))
    short = tempfile.mkdtemp(prefix="pr", dir="/tmp")  # Ray's socket paths must stay short
    # No PARITY_PYTHON, no PYTHONPATH: the checkout's binary finds its own Python and package.
    env = {k: v for k, v in os.environ.items() if k not in ("PARITY_PYTHON", "PYTHONPATH", "VIRTUAL_ENV")}
    env["TMPDIR"] = short
    token = os.path.join(os.environ.get("HOME", "/nonexistent"), ".ray", "auth_token")
    had_token = os.path.exists(token)
    try:
        runs = {}
        for eng in ("local", "ray"):
            r = subprocess.run([PARITY, "check", str(tmp_path / "m.onnx"), "--dataset", str(data), "--engine", eng,
                                "--json", str(tmp_path / f"{eng}.json")], capture_output=True, text=True,
                               errors="replace", env=env, cwd=tmp_path, timeout=500)
            assert r.returncode == 0, r.stdout + r.stderr[-3000:]
            assert "deprecated" not in r.stderr.lower(), r.stderr[-3000:]  # issue 54: Ray's concurrency= warning
            # A name with a newline stays on its console line (escaped).
            assert all(not ln.startswith("b (") for ln in r.stdout.splitlines()), r.stdout
            runs[eng] = json.loads((tmp_path / f"{eng}.json").read_text())
        assert runs["ray"]["count"] == runs["local"]["count"] == len(names)
        assert had_token or not os.path.exists(token), "the run wrote ~/.ray/auth_token"
        left = [n for n in os.listdir(short) if n.startswith(("parity_ray.", "parity-ray-", "ray", "session"))]
        assert left == [], left
    finally:
        subprocess.run(["rm", "-rf", short])
