"""Builds ORT GenAI packages for the GenAI corpus check (test_genai.py,
docs/generation.md "ORT GenAI packages"), offline: a tiny Hugging Face model
with seeded random weights (the step models of gen_models / genai_models,
nothing downloaded), saved with save_pretrained beside a word-level tokenizer
made here (the model builder asks for one), then onnxruntime-genai's model
builder (fp32, CPU) makes the package: model.onnx, genai_config.json, the
tokenizer files.

    PYTHONPATH=python:python/tests python -m genai_build OUT_DIR [FAMILY]

OUT_DIR/hf/        the Hugging Face folder (config.json, model.safetensors, tokenizer)
OUT_DIR/package/   the ORT GenAI package (model.onnx, genai_config.json, ...)
FAMILY: llama (gen_models.llama_step's weights, the default) or qwen2
(genai_models.qwen2_step's).
"""

import os
import subprocess
import sys

from gen_build import CHILD_ENV

# The builder reads only the folder: no hub, no telemetry.
OFFLINE_ENV = dict(CHILD_ENV, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1")


def _tokenizer(vocab, config):
    """A word-level tokenizer over `vocab` ids ("t0" .. "tN"; the special
    tokens at the config's ids): the builder saves it into the package."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    special = {config.bos_token_id: "<s>", config.eos_token_id: "</s>", config.pad_token_id: "<pad>"}
    words = {special.get(i, f"t{i}"): i for i in range(vocab)}
    tok = Tokenizer(models.WordLevel(words, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                   unk_token="<pad>")


def save_hf(step, hf_dir, architecture):
    """The step model's weights as a plain `architecture` folder (the step
    class's name would not be a builder's architecture)."""
    import json
    step.save_pretrained(hf_dir, safe_serialization=True)
    path = os.path.join(hf_dir, "config.json")
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dict(config, architectures=[architecture]), f, indent=2)
    _tokenizer(step.config.vocab_size, step.config).save_pretrained(hf_dir)


def run_builder(hf_dir, out, precision="fp32", extra=()):
    cache = os.path.join(os.path.dirname(os.path.abspath(out)), "builder_cache")
    r = subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf_dir, "-o", out,
                        "-p", precision, "-e", "cpu", "-c", cache, *extra],
                       capture_output=True, text=True, env=OFFLINE_ENV, timeout=600)
    if r.returncode != 0 or not os.path.exists(os.path.join(out, "genai_config.json")):
        raise RuntimeError(f"the model builder failed (exit {r.returncode}): {r.stderr[-2000:]}")
    return out


def step_model(family):
    if family == "llama":
        import gen_models
        return gen_models.llama_step(), "LlamaForCausalLM"
    import genai_models
    return genai_models.qwen2_step(), "Qwen2ForCausalLM"


def build(out, family="llama"):
    """OUT/hf and OUT/package for `family`; returns the package's path."""
    import torch
    torch.set_num_threads(1)
    hf = os.path.join(out, "hf")
    step, arch = step_model(family)
    save_hf(step, hf, arch)
    return run_builder(hf, os.path.join(out, "package"))


if __name__ == "__main__":
    print(build(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "llama"))
