"""Builds the generation tests' files (test_generation.py, bench/generate):
exports of gen_models' decode steps and their dumps with --generate.

    PYTHONPATH=python:python/tests python -m gen_build OUT_DIR [llama|whisper ...]
"""

import contextlib
import io
import os
import subprocess
import sys

import torch

import gen_models as gm
from parity.torch.exporter import export

STEPS = 16
HERE = os.path.dirname(os.path.abspath(__file__))
# gen_models lives beside this file: a child `python -m parity.torch` finds it only
# when this folder is on its PYTHONPATH (CI's PYTHONPATH has the package, not the tests).
CHILD_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [HERE, os.path.dirname(HERE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))


def dump_torch(factory, *argv, check=True):
    """`python -m parity.torch dump gen_models:FACTORY ARGV...`, output captured."""
    return subprocess.run([sys.executable, "-m", "parity.torch", "dump", f"gen_models:{factory}", *argv],
                          check=check, capture_output=True, text=True, env=CHILD_ENV)


def dump_here(*argv):
    """`python -m parity.torch ARGV...` run in this process, for the builders: the
    same command and files, without a second interpreter importing torch, transformers
    and torch._dynamo again (3-5 s of CPU a dump; docs/bench.md, "make test time").
    The command line itself is tested as a child process (dump_torch, test_torch_cli).
    Raises RuntimeError with its output when it exits non-zero."""
    from parity.torch.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(argv))
    if code:
        raise RuntimeError(f"parity.torch {' '.join(argv)}: exit {code}\n{out.getvalue()}")


def _dump(factory, out, extra=()):
    dump_here("dump", f"gen_models:{factory}", "--generate", str(STEPS), "-o", out, "--force", *extra)


def build_llama(out, exporter="dynamo"):
    """step.onnx (healthy), step_vproj.onnx (LLAMA_FAULT x1.02), dump/ (PyTorch's decode of the healthy model)."""
    os.makedirs(out, exist_ok=True)
    kw = {"input_names": gm.LLAMA_INPUTS, "output_names": gm.LLAMA_OUTPUTS, "dynamic_axes": gm.LLAMA_DYNAMIC}
    for name, fault in (("step.onnx", None), ("step_vproj.onnx", 1.02)):
        model = gm.llama_step(fault)
        export(model, model.make_inputs(0, seq=2, past=3), os.path.join(out, name), exporter=exporter, **kw)
    _dump("llama_step", os.path.join(out, "dump"), ["--output-names", ",".join(gm.LLAMA_OUTPUTS)])


def build_llama_prompt(out, seed):
    """dump_seed{seed}/: PyTorch's decode of the healthy Llama step from another prompt (make_inputs(seed)),
    the same weights (the factory seeds them)."""
    path = os.path.join(out, f"dump_seed{seed}")
    _dump("llama_step", path, ["--output-names", ",".join(gm.LLAMA_OUTPUTS), "--seed", str(seed)])
    return path


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
