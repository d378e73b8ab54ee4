"""Builds the generation tests' files (test_generation.py, bench/generate):
exports of gen_models' decode steps and their dumps with --generate.

    PYTHONPATH=python:python/tests python -m gen_build OUT_DIR [llama|whisper ...]
"""

import os
import subprocess
import sys

import torch

import gen_models as gm
from parity.torch.exporter import export

STEPS = 16


def _dump(factory, out, extra=()):
    cmd = [sys.executable, "-m", "parity.torch", "dump", f"gen_models:{factory}", "--generate", str(STEPS),
           "-o", out, "--force", *extra]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def build_llama(out, exporter="dynamo"):
    """step.onnx (healthy), step_vproj.onnx (LLAMA_FAULT x1.02), dump/ (PyTorch's decode of the healthy model)."""
    os.makedirs(out, exist_ok=True)
    kw = {"input_names": gm.LLAMA_INPUTS, "output_names": gm.LLAMA_OUTPUTS, "dynamic_axes": gm.LLAMA_DYNAMIC}
    for name, fault in (("step.onnx", None), ("step_vproj.onnx", 1.02)):
        model = gm.llama_step(fault)
        export(model, model.make_inputs(0, seq=2, past=3), os.path.join(out, name), exporter=exporter, **kw)
    _dump("llama_step", os.path.join(out, "dump"), ["--output-names", ",".join(gm.LLAMA_OUTPUTS)])


def build_whisper(out, exporter="torchscript"):
    """encoder.onnx, step.onnx and dump/ of the Whisper-like encoder-decoder."""
    os.makedirs(out, exist_ok=True)
    model = gm.whisper_step()
    export(model.encoder, model.make_encoder_inputs(0), os.path.join(out, "encoder.onnx"), exporter=exporter,
           input_names=["input_features"], output_names=gm.WHISPER_ENCODER_OUTPUTS)
    export(model, model.make_inputs(0, seq=2, past=3), os.path.join(out, "step.onnx"), exporter=exporter,
           input_names=gm.WHISPER_STEP_INPUTS, output_names=gm.WHISPER_STEP_OUTPUTS,
           dynamic_axes=gm.WHISPER_DYNAMIC)
    _dump("whisper_step", os.path.join(out, "dump"), ["--output-names", ",".join(gm.WHISPER_STEP_OUTPUTS)])


def main(argv):
    out, which = argv[0], argv[1:] or ["llama", "whisper"]
    torch.set_num_threads(1)
    for w in which:
        {"llama": build_llama, "whisper": build_whisper}[w](os.path.join(out, w))


if __name__ == "__main__":
    main(sys.argv[1:])
