"""Peak memory reported through Python is the check's own, not the Python
process's (issue 54): parity.check runs the binary from this interpreter, and
Linux carries getrusage's ru_maxrss over from the parent across fork and exec,
so a report made from a 1 GiB Python process said 1055 MiB for a check of
about 170. The binary reads its own /proc/self/status VmHWM instead.

Tested without the compiled extension, as test_messages.py does: parity._core
is stood in by a module holding only ParityError, and parity.binary_path is
the checkout's build/parity."""

import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

from parity_binary import PARITY, needs_parity

pytestmark = needs_parity


def _conv_model(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((16, 3, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["images", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["out"])],
        "conv", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 16, 32, 32])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


@pytest.fixture
def api(monkeypatch):
    if "parity._core" not in sys.modules:
        try:
            import parity._core  # noqa: F401
        except ImportError:
            fake = types.ModuleType("parity._core")
            fake.ParityError = type("ParityError", (ValueError,), {})
            monkeypatch.setitem(sys.modules, "parity._core", fake)
    from parity import _cli, engine
    monkeypatch.setattr(_cli, "binary_path", lambda: PARITY)
    return engine


def test_peak_memory_through_python_is_the_checks_own_not_the_interpreters(api, tmp_path):
    model = str(tmp_path / "m.onnx")
    _conv_model(model)
    from parity import _cli
    # The CLI's own number: started by a small shell, which forks it (the
    # shell's peak is what exec would carry over, a few MiB).
    cli_report = tmp_path / "cli"
    subprocess.run(["/bin/sh", "-c", f"'{PARITY}' check '{model}' --runs 3 --report '{cli_report}' >/dev/null; :"],
                   check=True, env=_cli.binary_environ())
    cli_peak = json.loads((cli_report / "report.json").read_text())["performance"][0]["peak_rss_bytes"]

    ballast = np.ones(1 << 28, dtype=np.float32)  # 1 GiB resident in this interpreter
    python_peak = api.check(model, runs=3).data["performance"][0]["peak_rss_bytes"]
    del ballast

    print(f"peak RSS: CLI {cli_peak / 2**20:.1f} MiB, through Python {python_peak / 2**20:.1f} MiB")
    assert cli_peak > 0 and python_peak > 0
    assert python_peak < 1 << 30, "the report states the Python process's peak, not the check's"
    assert abs(python_peak - cli_peak) <= 0.10 * cli_peak, (python_peak, cli_peak)
