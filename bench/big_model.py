"""Writes a big MatMul-stack ONNX model with its weights as external data.

    python bench/big_model.py OUT.onnx [--layers 16] [--dim 8192]

16 layers of 8192x8192 fp32 (the default) are 1.07 billion parameters, 4.3 GB
of weights in OUT.onnx.data beside a graph of a few kB. Each layer is
MatMul then Relu or Tanh (alternating); the input is [1, dim] (batch 1, so
activations stay small). The weights are written layer by layer, each
4096-aligned in the data file, so generating needs one layer of memory, not
the whole model. Random weights scaled by 1/sqrt(dim) keep activations
bounded. Used by docs/peers.md's "a billion parameters" numbers; never
commit the output.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def build(out: str, layers: int, dim: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    data_name = os.path.basename(out) + ".data"
    data_path = os.path.join(os.path.dirname(out) or ".", data_name)
    nodes, inits = [], []
    x = "x"
    with open(data_path, "wb") as data:
        for i in range(layers):
            w = rng.standard_normal((dim, dim), dtype=np.float32)
            w *= np.float32(1.0 / np.sqrt(dim))
            offset = (data.tell() + 4095) // 4096 * 4096
            data.write(b"\0" * (offset - data.tell()))
            data.write(w.tobytes())
            t = TensorProto()
            t.name = f"w{i}"
            t.data_type = TensorProto.FLOAT
            t.dims.extend([dim, dim])
            for key, value in (("location", data_name), ("offset", offset), ("length", w.nbytes)):
                entry = t.external_data.add()
                entry.key, entry.value = key, str(value)
            t.data_location = TensorProto.EXTERNAL
            inits.append(t)
            nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"h{i}"], name=f"mm{i}"))
            act = "Relu" if i % 2 == 0 else "Tanh"
            nodes.append(helper.make_node(act, [f"h{i}"], [f"a{i}"], name=f"act{i}"))
            x = f"a{i}"
    graph = helper.make_graph(nodes, "matmul_stack",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, dim])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, dim])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    with open(out, "wb") as f:
        f.write(model.SerializeToString())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--dim", type=int, default=8192)
    a = p.parse_args()
    build(a.out, a.layers, a.dim)
    print(f"{a.out}: {a.layers} x [{a.dim}, {a.dim}] fp32 = {a.layers * a.dim * a.dim:,} parameters")


if __name__ == "__main__":
    main()
