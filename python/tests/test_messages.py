"""Messages of the Python package that issue 28 found wrong, tested without
the compiled extension: parity._core is stood in by a module holding only
ParityError (the one name parity._cli takes from it), and the binary by a
script that answers as the real one does for a bad input name."""

import os
import stat
import sys
import types

import pytest


@pytest.fixture
def cli(monkeypatch, tmp_path):
    if "parity._core" not in sys.modules:
        try:
            import parity._core  # noqa: F401
        except ImportError:
            fake = types.ModuleType("parity._core")
            fake.ParityError = type("ParityError", (ValueError,), {})
            monkeypatch.setitem(sys.modules, "parity._core", fake)
    from parity import _cli
    return _cli


def test_a_wrong_input_name_names_the_inputs_given_not_a_temp_file(cli, monkeypatch, tmp_path):
    tmp = str(tmp_path / "parity-run-abc123")
    os.makedirs(tmp)
    script = tmp_path / "parity"
    script.write_text("#!/bin/sh\necho \"parity: error: $2: 'imgs' is not an input of m.onnx (inputs: 'images')"
                      "; did you mean 'images'?\" >&2\nexit 2\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(cli, "binary_path", lambda: str(script))
    with pytest.raises(ValueError) as e:
        cli.invoke(["run", os.path.join(tmp, "inputs.npz")], tmp)
    message = str(e.value)
    assert message.startswith("the inputs given: 'imgs' is not an input of m.onnx"), message
    assert "parity-run-abc123" not in message and "inputs.npz" not in message


def test_first_divergence_of_a_failing_torch_check_is_its_first_divergent_layer():
    from parity.report import Report
    layer = {"module": "layer1.0.conv1", "tensor": "/layer1/conv/Conv_output_0", "reason": "max_abs 0.5"}
    r = Report({"schema": "parity.check/1", "overall_status": "FAIL", "locate": None,
                "alignment": {"first_divergence": layer}})
    assert not r.passed
    assert r.first_divergence == layer
    assert "first divergence at '/layer1/conv/Conv_output_0'" in repr(r)
    assert Report({"schema": "parity.check/1", "overall_status": "PASS", "locate": None,
                   "alignment": {"first_divergence": None}}).first_divergence is None


def test_the_checkout_without_the_extension_says_how_to_build_it_in_one_line():
    """Issue 54: `parity.compare` from a checkout without parity._core said
    `No module named 'parity._core'`; now one line naming the command."""
    import subprocess
    here = os.path.join(os.path.dirname(__file__), "..")
    checkout_parity = os.path.join(here, "parity")
    if any(f.startswith("_core") for f in os.listdir(checkout_parity)):
        pytest.skip("this checkout's python/parity holds a built extension")
    for statement in ("import parity; parity.compare", "from parity import check", "import parity.testing"):
        proc = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": os.path.abspath(here)}, cwd=here)
        assert proc.returncode == 1
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("ImportError: parity's C++ extension parity._core is not built"), proc.stderr
        assert "make python-package" in last and "pip install ." in last
        assert "No module named" not in proc.stderr
    ok = subprocess.run([sys.executable, "-c", "import parity, parity.torch"], capture_output=True, text=True,
                        env={**os.environ, "PYTHONPATH": os.path.abspath(here)}, cwd=here)
    assert ok.returncode == 0, ok.stderr
