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
