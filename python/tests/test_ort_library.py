"""Which ONNX Runtime the Python package runs (issue 24, docs/providers.md "Which
ONNX Runtime"): the environment's onnxruntime wheel's library when one is
importable, else the package's own; parity.env() and every report say which
(version and file). Needs the installed package, as test_api.py."""
import os

import numpy as np
import pytest

try:
    import parity
    from parity import _cli, _core  # noqa: F401  (the compiled extension, as test_api.py)
except ImportError as e:  # python/ on sys.path without a build: the source tree only
    if os.environ.get("PARITY_REQUIRE_PACKAGE"):  # make test builds it first: its absence is a failure
        raise
    pytest.skip(f"the parity package is not installed (pip install .): {e}", allow_module_level=True)

WHEEL = _cli.wheel_ort_library()
needs_wheel = pytest.mark.skipif(WHEEL is None, reason="no onnxruntime wheel is importable in this environment")


def _wheel_version():
    return os.path.basename(WHEEL)[len("libonnxruntime.so."):]  # libonnxruntime.so.1.31.1 -> 1.31.1


@pytest.fixture
def no_ort_override(monkeypatch):
    monkeypatch.delenv("PARITY_ORT_LIBRARY", raising=False)


@needs_wheel
def test_env_reports_the_wheels_ort(no_ort_override):
    import onnxruntime  # the wheel's own word on its version, to set beside parity's
    e = parity.env()
    assert e["ort_version"] == _wheel_version() == onnxruntime.__version__
    assert e["ort_library"] == os.path.realpath(WHEEL)
    assert e["ort_origin"] == "PARITY_ORT_LIBRARY"


def test_without_a_wheel_the_packages_own_ort_runs(no_ort_override, monkeypatch):
    monkeypatch.setattr(_cli, "wheel_ort_library", lambda: None)
    # The dynamic loader searches LD_LIBRARY_PATH before the binary's RUNPATH:
    # `make test SANITIZE=1` names the source tree's ORT there for the ASan
    # binary, which would stand in for the package's own.
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    e = parity.env()
    assert e["ort_origin"] == "bundled"
    assert os.path.dirname(e["ort_library"]) == os.path.dirname(os.path.realpath(parity.binary()))
    if WHEEL is not None:
        assert e["ort_library"] != os.path.realpath(WHEEL)


def test_an_explicit_parity_ort_library_wins(monkeypatch, tmp_path):
    bad = tmp_path / "libonnxruntime.so.1"
    bad.write_text("not a library\n")
    monkeypatch.setenv("PARITY_ORT_LIBRARY", str(bad))
    with pytest.raises(parity.ParityError, match="not a shared library"):
        parity.env()


@needs_wheel
def test_run_and_check_run_on_the_wheels_ort(no_ort_override, tmp_path):
    from onnx import TensorProto, helper, save
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = tmp_path / "relu.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9), path)
    x = np.array([[-1, 0, 2], [3, -4, 5]], dtype=np.float32)
    assert np.array_equal(parity.run(path, {"x": x})["y"], np.maximum(x, 0))
    report = parity.check(path, runs=2)
    assert report.data["env"]["ort_version"] == _wheel_version()
    assert report.data["env"]["ort_library"] == os.path.realpath(WHEEL)


@needs_wheel
def test_env_lists_each_runtime_it_is_given(no_ort_override, monkeypatch):
    # The package's own ORT runs; the wheel's is a further runtime, read by a
    # child process that loads it (parity env --runtime; issue 43).
    monkeypatch.setattr(_cli, "wheel_ort_library", lambda: None)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    e = parity.env(runtimes=[WHEEL])
    assert e["ort_origin"] == "bundled"
    assert [r["library"] for r in e["runtimes"]] == [os.path.realpath(WHEEL)]
    assert e["runtimes"][0]["version"] == _wheel_version() != e["ort_version"]
    with pytest.raises(parity.ParityError, match="nope.so"):
        parity.env(runtimes=["/nonexistent/nope.so"])


@needs_wheel
def test_check_and_locate_compare_the_wheel_with_the_packages_own_ort(no_ort_override, tmp_path):
    # The target runs on the wheel's ORT (this environment's), the reference on the
    # package's own in a child process (issue 43): both named.
    from onnx import TensorProto, helper, save
    own = sorted(f for f in os.listdir(os.path.dirname(os.path.realpath(parity.binary())))
                 if f.startswith("libonnxruntime.so"))
    assert own, "the package carries its own ORT"
    own = os.path.join(os.path.dirname(os.path.realpath(parity.binary())), own[0])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = tmp_path / "relu.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9), path)
    report = parity.check(path, runs=2, reference_ort_library=own)
    assert report.passed, report.summary
    assert report.data["env"]["ort_library"] == os.path.realpath(WHEEL)
    assert report.data["reference_runtime"]["library"] == own
    assert report.data["reference_runtime"]["version"] != _wheel_version()
    loc = parity.locate(path, reference_ort_library=own, target_ort_library=WHEEL)
    assert loc.data["runtimes"]["plans_identical"] is True
    assert loc.data["runtimes"]["reference"]["ort"]["library"] == own
