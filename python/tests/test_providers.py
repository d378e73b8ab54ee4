"""The OpenVINO plugin EP through the Python API (issue 24): parity.check with a
config dict naming the provider and its options; the bf16 diagnosis in the
report; the f32 hint passes. Skips where onnxruntime-ep-openvino is absent, and
without the installed package (as test_api.py)."""

import importlib.util
import os

import numpy as np
import pytest

try:
    import parity
    from parity import _core  # noqa: F401  (the compiled extension, as test_api.py)
except ImportError as e:  # python/ on sys.path without a build: the source tree only
    if os.environ.get("PARITY_REQUIRE_PACKAGE"):  # make test builds it first: its absence is a failure
        raise
    pytest.skip(f"the parity package is not installed (pip install .): {e}", allow_module_level=True)

F32 = '{"CPU":{"INFERENCE_PRECISION_HINT":"f32"}}'

def _openvino_has_a_device():
    """OpenVINO's plugin EP lists Intel hardware only: on an AMD CPU it offers no device."""
    if importlib.util.find_spec("onnxruntime_ep_openvino") is None:
        return False
    try:
        # Found, a library is listed but loaded only where it is named (issue 46): name it to see its devices.
        libs = [lib for lib in parity.env().get("ep_libraries", []) if lib.get("name") == "openvino"]
        if not libs:
            return False
        import json
        import subprocess
        import tempfile
        from parity._cli import binary_environ, binary_path
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "env.json")
            subprocess.run([binary_path(), "env", "--ep-library", "openvino=" + libs[0]["path"], "--json", out],
                           env=binary_environ(), capture_output=True, check=True)
            with open(out, encoding="utf-8") as f:
                devices = json.load(f)["env"].get("ep_devices", [])
        return any(d.get("ep_name") == "OpenVINOExecutionProvider" for d in devices)
    except Exception:  # noqa: BLE001 - no device list is no device
        return False


pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("onnxruntime_ep_openvino") is None,
                       reason="onnxruntime-ep-openvino is not installed"),
    pytest.mark.skipif(os.environ.get("PARITY_EP_DISCOVERY") == "0",
                       reason="plugin EP discovery is off (PARITY_EP_DISCOVERY=0, as under make test SANITIZE=1)"),
    pytest.mark.skipif(not _openvino_has_a_device(),
                       reason="the OpenVINO plugin offers no device on this CPU (it lists Intel hardware only)"),
]


@pytest.fixture(scope="module")
def conv_relu(tmp_path_factory):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = np.random.default_rng(0).standard_normal((16, 8, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])], [numpy_helper.from_array(w, "w")])
    path = tmp_path_factory.mktemp("ep") / "conv_relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9), path)
    return path


def _bf16_cpu():
    import subprocess
    from parity._cli import binary_path
    return "capabilities BF16" in subprocess.run([binary_path(), "env"], capture_output=True, text=True).stdout


def test_check_on_openvino_names_bf16_and_the_f32_hint_passes(conv_relu):
    default = parity.check(conv_relu, config={"opt": "all", "providers": ["openvino"]}, runs=2)
    assert default.data["target_assignment"][0]["ep"] == "OpenVINOExecutionProvider"
    if _bf16_cpu():
        assert not default.passed
        assert default.data["arithmetic"]["arithmetic"] == "bf16"
        assert "INFERENCE_PRECISION_HINT" in default.data["arithmetic"]["fix"]
    f32 = parity.check(conv_relu, config={"opt": "all", "providers": [{"name": "openvino", "options": {"load_config": F32}}]},
                       runs=2)
    assert not [t for t in f32.data["failed_tests"] if t["id"].startswith("numerics.typical")]
    assert f32.data["env"]["ep_devices"], "the report's env lists the EP devices"
    assert f32.data["arithmetic"] is None, "no bf16 where there is none"
    if not _bf16_cpu():
        pytest.skip("the f32 half ran; the bf16 half needs a CPU whose OpenVINO device lists BF16 (AMX or "
                    "AVX512-BF16 Xeons), which this one does not")
