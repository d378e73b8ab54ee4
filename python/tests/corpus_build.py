"""Builds the corpus check's files (test_corpus.py, bench/corpus_bench.py,
docs/generation.md "A prompt corpus"): the Llama decode step of gen_models
(seeded weights, nothing downloaded) exported healthy and with three planted
faults that move its logits a little, a prompt corpus, and PyTorch's corpus
record (python -m parity.torch corpus).

    PYTHONPATH=python:python/tests python -m corpus_build OUT_DIR [PROMPTS [STEPS]]

OUT_DIR/step.onnx          healthy (dynamo export, fp32)
OUT_DIR/step_w101.onnx     LLAMA_FAULT's weight x1.01 in the export
OUT_DIR/step_fp16.onnx     the healthy export converted to float16 inside (fp32 inputs and outputs)
OUT_DIR/step_int8.onnx     the healthy export, weights dynamically quantized to int8 (onnxruntime.quantization)
OUT_DIR/prompts.jsonl      PROMPTS prompts of 3 to 12 seeded random token ids, each with a text
OUT_DIR/corpus/            PyTorch's record: STEPS steps a prompt, top-64
"""

import json
import os
import sys

import numpy as np

import gen_models as gm
from gen_build import dump_here


def write_prompts(path, count, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            ids = rng.integers(3, gm.VOCAB, int(rng.integers(3, 13))).tolist()
            f.write(json.dumps({"input_ids": ids, "text": f"prompt {i}: " + " ".join(f"t{t}" for t in ids)}) + "\n")


def export_faults(out):
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.float16 import convert_float_to_float16

    from parity.torch.exporter import export
    kw = {"input_names": gm.LLAMA_INPUTS, "output_names": gm.LLAMA_OUTPUTS, "dynamic_axes": gm.LLAMA_DYNAMIC}
    for name, fault in (("step.onnx", None), ("step_w101.onnx", 1.01)):
        model = gm.llama_step(fault)
        export(model, model.make_inputs(0, seq=2, past=3), os.path.join(out, name), exporter="dynamo", **kw)
    healthy = onnx.load(os.path.join(out, "step.onnx"))
    onnx.save(convert_float_to_float16(healthy, keep_io_types=True), os.path.join(out, "step_fp16.onnx"))
    quantize_dynamic(os.path.join(out, "step.onnx"), os.path.join(out, "step_int8.onnx"),
                     weight_type=QuantType.QInt8)


def record(out, steps, extra=()):
    dump_here("corpus", "gen_models:llama_step", "--prompts", os.path.join(out, "prompts.jsonl"), "--generate",
              str(steps), "--output-names", ",".join(gm.LLAMA_OUTPUTS), "-o", os.path.join(out, "corpus"), "--quiet",
              *extra)


def main(argv):
    out = argv[0]
    prompts = int(argv[1]) if len(argv) > 1 else 24
    steps = int(argv[2]) if len(argv) > 2 else 16
    os.makedirs(out, exist_ok=True)
    import torch
    torch.set_num_threads(1)
    export_faults(out)
    write_prompts(os.path.join(out, "prompts.jsonl"), prompts)
    record(out, steps)


if __name__ == "__main__":
    main(sys.argv[1:])
