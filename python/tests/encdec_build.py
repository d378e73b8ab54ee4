"""Builds the encoder-decoder generation tests' files (test_generation_encdec.py):
torchscript exports of encdec_models' steps, healthy and with planted faults,
and PyTorch's dumps with --generate.

    PYTHONPATH=python:python/tests python -m encdec_build OUT_DIR [t5 t5_merged whisper whisper_merged]

OUT_DIR/NAME/ holds encoder.onnx, encoder_fault.onnx (ENCODER_FAULT x1.05),
step.onnx, step_fault.onnx (DECODER_FAULT x1.05; in both branches of a merged
decoder), for t5 step_position_fault.onnx (stale_position_bias), and
dump_seed{S}/ for the seeds asked. The dynamo exporter is not
used: it fails on T5 itself (torch.export cannot trace T5Stack's cache
handling; docs/generation.md), torchscript is fine.
"""

import os
import sys

import onnx
import torch
from onnx import compose, helper

import encdec_models as em
from gen_build import dump_here
from parity.torch.exporter import export

STEPS = 12
FAULT = 1.05
FACTORIES = {"t5": "t5_step", "t5_merged": "t5_merged", "whisper": "whisper_step2",
             "whisper_merged": "whisper_merged"}


def _planted(model, module, factor):
    with torch.no_grad():
        dict(model.named_modules())[module].weight.mul_(factor)
    return model


def _model(name, fault=None):
    model = getattr(em, FACTORIES[name])()
    if fault == "encoder":
        _planted(model, em.ENCODER_FAULT[model.family], FAULT)
    elif fault == "decoder":
        _planted(model, em.DECODER_FAULT[model.family], FAULT)
    return model


def stale_position_bias(model):
    """The planted position fault: decoder block 0's relative position bias
    computed as if nothing were cached (right at the prefill, wrong after)."""
    attn = model.t5.decoder.block[0].layer[0].SelfAttention

    class Stale(type(attn)):
        def compute_bias(self, query_length, key_length, device=None, past_seen_tokens=0):
            return super().compute_bias(query_length, key_length, device=device, past_seen_tokens=0)

    attn.__class__ = Stale
    return model


def export_encoder(model, path):
    export(model.encoder, model.make_encoder_inputs(0), path, exporter="torchscript",
           input_names=["encoder_input"], output_names=list(model.encoder_output_names))


def export_step(model, path):
    """The step (separate) or the two branches joined under one If (merged)."""
    if not model.merged:
        export(model, model.make_inputs(0, seq=2, past=3), path, exporter="torchscript",
               input_names=em.STEP_INPUTS, output_names=em.STEP_OUTPUTS, dynamic_axes=em.DYNAMIC)
        return
    branches = {}
    for flag in (True, False):
        model.branch = flag
        part = f"{path}.{'cached' if flag else 'first'}.onnx"
        export(model, model.make_inputs(0, seq=1 if flag else 2, past=3 if flag else 0), part,
               exporter="torchscript", input_names=em.MERGED_INPUTS, output_names=em.MERGED_OUTPUTS,
               dynamic_axes=em.MERGED_DYNAMIC)
        branches[flag] = onnx.load(part)
        os.remove(part)
    model.branch = None
    onnx.save(merge_branches(branches[True], branches[False]), path)


def _branch_graph(model, prefix, name):
    """`model`'s graph as an If branch: its values prefixed (node names kept), no inputs
    (the outer graph's, by name), its outputs typed without shapes."""
    g = compose.add_prefix(model, prefix, rename_nodes=False, rename_inputs=False).graph
    del g.input[:]
    for o in g.output:
        _symbolic(o)
    g.name = name
    return g


def _symbolic(value_info):
    """Every dim of `value_info` symbolic: the branches give other sizes."""
    for k, d in enumerate(value_info.type.tensor_type.shape.dim):
        d.Clear()
        d.dim_param = f"{value_info.name.split('_', 1)[-1]}_{k}"
    return value_info


def merge_branches(cached, first):
    """One model: If(use_cache_branch) then `cached` else `first`, as
    optimum's merged decoders are; the outer inputs are `cached`'s (every
    past dim symbolic), plus use_cache_branch."""
    then_g, else_g = _branch_graph(cached, "c_", "cached"), _branch_graph(first, "f_", "first")
    # An input one branch does not use is dropped from its export: the union, in the step's order.
    given = {i.name: i for m in (first, cached) for i in m.graph.input}
    inputs = [given[n] for n in em.MERGED_INPUTS if n in given and n != "use_cache_branch"]
    for i in inputs:
        if i.name in em.SELF + em.CROSS:
            i.type.tensor_type.shape.dim[2].dim_param = "past" if i.name in em.SELF else "enc_len"
    flag = helper.make_tensor_value_info("use_cache_branch", onnx.TensorProto.BOOL, [1])
    node = helper.make_node("If", ["use_cache_branch"], list(em.MERGED_OUTPUTS), then_branch=then_g,
                            else_branch=else_g, name="use_cache_branch_if")
    outputs = [_symbolic(helper.make_tensor_value_info(o.name, o.type.tensor_type.elem_type,
                                                       [None] * len(o.type.tensor_type.shape.dim)))
               for o in cached.graph.output]
    graph = helper.make_graph([node], "merged_decoder", inputs + [flag], outputs)
    merged = helper.make_model(graph, opset_imports=cached.opset_import, ir_version=cached.ir_version)
    onnx.checker.check_model(merged)
    return merged


def dump(name, out, seed, steps=STEPS):
    path = os.path.join(out, f"dump_seed{seed}")
    outputs = em.MERGED_OUTPUTS if name.endswith("merged") else em.STEP_OUTPUTS
    dump_here("dump", f"encdec_models:{FACTORIES[name]}", "--generate", str(steps), "--seed", str(seed),
              "--sizes", "none", "-o", path, "--force", "--output-names", ",".join(outputs))
    return path


def build(name, out, seeds=(0,)):
    """OUT/: the exports (healthy and planted) and a dump per seed."""
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    for fault, enc, step in ((None, "encoder.onnx", "step.onnx"), ("encoder", "encoder_fault.onnx", None),
                             ("decoder", None, "step_fault.onnx")):
        model = _model(name, fault)
        if enc:
            export_encoder(model, os.path.join(out, enc))
        if step:
            export_step(model, os.path.join(out, step))
    if name == "t5":
        export_step(stale_position_bias(_model(name)), os.path.join(out, "step_position_fault.onnx"))
    return [dump(name, out, s) for s in seeds]


def main(argv):
    out, which = argv[0], argv[1:] or list(FACTORIES)
    for w in which:
        build(w, os.path.join(out, w), seeds=(0, 1, 2, 3, 4))


if __name__ == "__main__":
    main(sys.argv[1:])
