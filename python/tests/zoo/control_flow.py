"""Models with control flow, built with onnx.helper (issue 41): a Loop whose
trip count is an int64 input and an If on the sign of the input's sum, each
with weights that a test can scale to plant a fault inside a body."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _weights(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]


def loop_model(w_scale=1.0):
    """y, ys = Loop(n, x): h <- tanh(h @ W + b) n times; ys stacks each h @ W + b.
    Body nodes: body_matmul, body_add, body_tanh, body_cond. W is read from the
    outer scope (as TorchScript exports put weights); b is the body's own."""
    w, b = _weights(0, (4, 4), (4,))
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["h_mm"], name="body_matmul"),
         helper.make_node("Add", ["h_mm", "b"], ["h_pre"], name="body_add"),
         helper.make_node("Tanh", ["h_pre"], ["h_out"], name="body_tanh"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("h_pre", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(b, "b")])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["x_relu"], name="pre_relu"),
         helper.make_node("Loop", ["n", "", "x_relu"], ["h_final", "ys"], name="loop", body=body),
         helper.make_node("Mul", ["h_final", "two"], ["y"], name="post_mul")],
        "loop_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, ["iterations", 2, 4])],
        [numpy_helper.from_array(w * np.float32(w_scale), "W"),
         numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    return _finish(graph)


def if_model(then_scale=1.0, else_scale=1.0):
    """y = If(sum(x) > 0, relu(x @ Wt), x * s) + 1. Branch nodes: then_matmul,
    then_relu, else_mul; Wt and s are the branches' own initializers."""
    wt, s = _weights(1, (4, 4), (4,))
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "Wt"], ["t_mm"], name="then_matmul"),
         helper.make_node("Relu", ["t_mm"], ["t_out"], name="then_relu")],
        "then_body", [], [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(wt * np.float32(then_scale), "Wt")])
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["e_out"], name="else_mul")],
        "else_body", [], [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(s * np.float32(else_scale), "s")])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["total"], name="sum", keepdims=0),
         helper.make_node("Greater", ["total", "zero"], ["positive"], name="positive"),
         helper.make_node("If", ["positive"], ["branch_out"], name="branch", then_branch=then_g, else_branch=else_g),
         helper.make_node("Add", ["branch_out", "one"], ["y"], name="post_add")],
        "if_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    return _finish(graph)


def _finish(graph):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def save(model, path):
    onnx.save(model, path)
    return path


def nested_model(then_scale=1.0):
    """A Loop whose body holds an If on its iteration number's parity:
    h <- h @ Wt (even iterations) or h + 1 (odd ones), n times."""
    (wt,) = _weights(2, (4, 4))
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "Wt"], ["even_out"], name="even_matmul")],
        "even", [], [helper.make_tensor_value_info("even_out", TensorProto.FLOAT, [2, 4])])
    else_g = helper.make_graph(
        [helper.make_node("Add", ["h_in", "one"], ["odd_out"], name="odd_add")],
        "odd", [], [helper.make_tensor_value_info("odd_out", TensorProto.FLOAT, [2, 4])])
    body = helper.make_graph(
        [helper.make_node("Mod", ["i", "two_i"], ["parity"], name="body_mod"),
         helper.make_node("Equal", ["parity", "zero_i"], ["even"], name="body_even"),
         helper.make_node("If", ["even"], ["h_out"], name="inner", then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [2, 4])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], name="outer", body=body)],
        "nested_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(wt * np.float32(then_scale), "Wt"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one"),
         numpy_helper.from_array(np.array(2, np.int64), "two_i"),
         numpy_helper.from_array(np.array(0, np.int64), "zero_i")])
    return _finish(graph)
