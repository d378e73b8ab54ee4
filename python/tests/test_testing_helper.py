"""A failing parity.testing.assert_export_matches prints the caller's line and
the message, not the helper's own source (issue 54: 148 lines, most of them
the helper's): it sets __tracebackhide__. Run in a pytest of its own, with the
export and the check stood in (no extension, no exporter needed)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CONFTEST = '''
import sys, types
try:
    import parity._core
except ImportError:
    fake = types.ModuleType("parity._core")
    fake.ParityError = type("ParityError", (ValueError,), {})
    sys.modules["parity._core"] = fake
'''

TEST = '''
import parity.testing
import parity.torch
from parity.report import Report


def test_export(monkeypatch, tmp_path):
    monkeypatch.setattr(parity.torch, "export", lambda *a, **k: {}, raising=False)
    failing = Report({"schema": "parity.check/1", "overall_status": "FAIL", "locate": None},
                     summary="FAIL m.onnx\\nfirst divergent module: layer3.0.conv2", report_dir=str(tmp_path))
    monkeypatch.setattr(parity.testing, "check", lambda *a, **k: failing)
    parity.testing.assert_export_matches(object(), (1,), report_dir=str(tmp_path))
'''


def test_a_failing_helper_prints_the_message_not_its_source(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_user.py").write_text(TEST)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(HERE, ".."), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "test_user.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "does not match PyTorch" in out and "layer3.0.conv2" in out, out
    assert "assert_export_matches(object()" in out  # the caller's line
    assert "raise AssertionError" not in out and "def assert_export_matches" not in out, out
    lines = out.count("\n")
    print(f"{lines} lines")
    assert lines < 40, out
