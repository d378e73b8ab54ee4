"""The Ray engine's failure paths (docs/dataset.md), on a local cluster of 2
actors: an actor that dies is restarted, its entries run again and the run
says so (PARITY_TEST_RAY_ACTOR_DIES, a test-only knob of
python/parity/_ray_engine.py); SIGINT leaves no report and no Ray folder of
ours. Marked `ray` (Ray's start-up takes tens of seconds here)."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

pytest.importorskip("ray")
torch = pytest.importorskip("torch")
from test_dataset_torch import export, squeezenet, samples  # noqa: E402

from parity_binary import PARITY, REPO, needs_parity  # noqa: E402
pytestmark = [pytest.mark.ray, needs_parity]


@pytest.fixture()
def setup(tmp_path):
    model = export(squeezenet(), tmp_path / "m.onnx")
    data = tmp_path / "data"
    data.mkdir()
    for i, s in enumerate(samples(16, seed=3)):
        np.savez(data / f"s{i:03d}.npz", **s)
    short = tempfile.mkdtemp(prefix="pr", dir="/tmp")  # Ray's socket paths must stay short
    env = dict(os.environ, PARITY_PYTHON=sys.executable, TMPDIR=short,
               PYTHONPATH=os.pathsep.join([os.path.join(REPO, "python"), os.environ.get("PYTHONPATH", "")]))
    yield model, data, env, short
    subprocess.run(["rm", "-rf", short])


def test_an_actor_that_dies_is_retried_and_the_run_says_so(setup, tmp_path):
    model, data, env, short = setup
    env[ "PARITY_TEST_RAY_ACTOR_DIES"] = str(tmp_path / "died")
    r = subprocess.run([PARITY, "check", str(model), "--dataset", str(data), "--engine", "ray", "--ray-actors", "2",
                        "--json", str(tmp_path / "r.json")], capture_output=True, text=True, env=env, timeout=500)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert (tmp_path / "died").exists()
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["count"] == 16 and rep["retried"]["entries"] >= 1 and rep["retried"]["samples"] >= 1
    assert "run again after a Ray actor died" in r.stdout and "an actor died" in r.stderr
    left = [n for n in os.listdir(short) if n.startswith(("parity_ray.", "parity-ray-", "ray", "session"))]
    assert left == [], os.listdir(short)  # our temp folder and Ray's session files are gone


def test_sigint_leaves_no_report_and_no_ray_folder(setup, tmp_path):
    model, data, env, short = setup
    out = tmp_path / "report"
    p = subprocess.Popen([PARITY, "check", str(model), "--dataset", str(data), "--engine", "ray", "--report",
                          str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 120
    while time.time() < deadline and not any(os.path.isdir(os.path.join(short, d, "ray", "session_latest"))
                                             for d in os.listdir(short)):
        time.sleep(0.2)
    assert p.poll() is None, p.communicate()
    p.send_signal(signal.SIGINT)
    _, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr[-3000:]
    assert "interrupted (SIGINT)" in stderr
    assert not out.exists() and not any(n.startswith(".report") for n in os.listdir(tmp_path))
    assert [n for n in os.listdir(short) if n.startswith(("parity_ray.", "parity-ray-", "ray", "session"))] == [], os.listdir(short)


def test_a_driver_that_says_it_was_interrupted_interrupts_parity(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group: the driver may see it first and exit
    128+SIGINT while parity's forwarder saw nothing. parity is interrupted all the same: exit 130,
    no report, no half-written file (seen once as exit 3 "the Python driver failed (exit 130)")."""
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "a.npz", x=np.ones((1, 4), np.float32))
    fake = tmp_path / "python"  # passes parity's "is parity and ray there" probe (-c), then "is interrupted"
    fake.write_text("#!/bin/sh\n[ \"$1\" = -c ] && exit 0\n"
                    "echo 'parity: ray: interrupted; the cluster is stopped, no rows written' >&2\nexit 130\n")
    fake.chmod(0o755)
    out = tmp_path / "report"
    r = subprocess.run([PARITY, "check", str(tmp_path / "m.onnx"), "--dataset", str(data), "--engine", "ray",
                        "--ray-python", str(fake), "--report", str(out)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 130, r.stderr
    assert "interrupted (SIGINT)" in r.stderr and "driver failed" not in r.stderr, r.stderr
    assert not out.exists() and not any(n.startswith(".report") for n in os.listdir(tmp_path))
