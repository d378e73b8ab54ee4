"""Long work shows progress on a terminal and nothing elsewhere (issue 54):
`parity baseline` draws a bar of the tensors written on stderr when stderr is
a terminal (a pty here), and writes no bar when it is a pipe, as in CI."""

import os
import pty
import subprocess

import numpy as np

from parity_binary import PARITY, needs_parity

pytestmark = needs_parity


def _model(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "images"
    for i in range(4):
        w = numpy_helper.from_array(rng.standard_normal((8, 3 if i == 0 else 8, 3, 3)).astype(np.float32), f"w{i}")
        inits.append(w)
        nodes += [helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        x = f"r{i}"
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8, 16, 16])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def _baseline(tmp_path, name, stderr):
    return subprocess.run([PARITY, "baseline", str(tmp_path / "m.onnx"), "--inputs", str(tmp_path / "x.npz"),
                           "-o", str(tmp_path / name)], stdout=subprocess.PIPE, stderr=stderr, timeout=120)


def test_baseline_draws_a_bar_on_a_terminal_and_none_in_a_pipe(tmp_path):
    _model(str(tmp_path / "m.onnx"))
    np.savez(tmp_path / "x.npz", images=np.ones((1, 3, 16, 16), np.float32))

    piped = _baseline(tmp_path, "bl-pipe", subprocess.PIPE)
    assert piped.returncode == 0, piped.stderr
    assert b"\r" not in piped.stderr and b"baseline default" not in piped.stderr, piped.stderr

    main, secondary = pty.openpty()
    try:
        on_tty = _baseline(tmp_path, "bl-tty", secondary)
        os.close(secondary)
        secondary = None
        drawn = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if secondary is not None:
            os.close(secondary)
        os.close(main)
    assert on_tty.returncode == 0
    assert b"\r[" in drawn and b"baseline default" in drawn, drawn
    assert drawn.rstrip(b" ").endswith(b"\r"), drawn[-200:]  # erased before the summary
