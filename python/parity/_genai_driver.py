"""The ORT GenAI side of `parity check PACKAGE_DIR --corpus DIR` (or
--prompts/--torch-model; docs/generation.md "ORT GenAI packages"): runs a
corpus's prompts through onnxruntime-genai's own loop (og.Model, og.Generator)
under the package's genai_config.json, as it is deployed.

Per prompt, two decodes on the runtime's own generator:
- teacher-forced: the prompt appended (append_tokens), then PyTorch's token
  of each step (the record's `tokens`); after each append the last
  position's logits (get_logits), float32 [steps, vocab];
- free-running, when the package's search is greedy (do_sample false, one
  beam): generate_next_token until `steps` tokens or is_done (an end token,
  max_length): the tokens the runtime picks itself, with every search option
  genai_config.json sets.

Called by the parity binary (src/engine/generate/genai_check.cc):
    python -m parity._genai_driver PACKAGE_DIR CORPUS_DIR SCRATCH_DIR
Stdout, one JSON object a line: first {"config", "search", "session_options"
(the decoder's), "genai_version", "ort_version", "greedy"}; then per prompt {"prompt", "logits" (a .npy in
SCRATCH_DIR: the steps done), "free_tokens" (null when not greedy), "ort_ms",
"error"}, after which it waits for a line on stdin before the next prompt
(one prompt's logits on disk at a time); last {"done": true}. Bad input (a
package onnxruntime-genai cannot load, a corpus it cannot read, no
onnxruntime-genai): one line on stderr, exit 2.
"""

import json
import os
import sys
import time


class BadInput(Exception):
    pass


def _say(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _load(package):
    try:
        import onnxruntime_genai as og
    except ImportError as e:
        raise BadInput(f"onnxruntime-genai is not importable by {sys.executable}: {e}") from None
    try:
        import onnxruntime
        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = None
    path = os.path.join(package, "genai_config.json")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{path}: not a genai_config.json: {e}") from None
    try:
        model = og.Model(package)
    except Exception as e:  # og raises RuntimeError with ORT's message
        raise BadInput(f"{package}: onnxruntime-genai cannot load the package: {' '.join(str(e).split())}") from None
    search = config.get("search") if isinstance(config, dict) else None
    search = search if isinstance(search, dict) else {}
    greedy = not search.get("do_sample", False) and int(search.get("num_beams", 1)) == 1
    decoder = config.get("model", {}).get("decoder", {}) if isinstance(config, dict) else {}
    options = decoder.get("session_options") if isinstance(decoder, dict) else None
    hello = {"config": os.path.abspath(path), "search": search, "genai_version": og.__version__,
             "ort_version": ort_version, "greedy": greedy,
             "session_options": options if isinstance(options, dict) else {}}
    return og, model, hello


def _corpus(corpus_dir):
    import numpy as np
    try:
        with open(os.path.join(corpus_dir, "corpus.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        files = manifest["files"]
        arrays = {k: np.load(os.path.join(corpus_dir, files[k])) for k in ("prompt_offsets", "prompt_ids", "tokens")}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BadInput(f"{corpus_dir}: cannot read the corpus: {e}") from None
    return arrays


def _teacher_forced(og, model, ids, tokens):
    """The last position's logits after the prompt and each of PyTorch's tokens."""
    import numpy as np
    rows = []
    gen = og.Generator(model, og.GeneratorParams(model))
    try:
        gen.append_tokens(np.asarray([ids], np.int32))
        for s, tok in enumerate(tokens):
            rows.append(np.asarray(gen.get_logits(), np.float32).reshape(-1))
            if s + 1 < len(tokens):
                gen.append_tokens(np.asarray([[tok]], np.int32))
    except Exception as e:
        return rows, f"step {len(rows)}: onnxruntime-genai: {' '.join(str(e).split())}"
    return rows, ""


def _free_running(og, model, ids, steps):
    """The tokens the runtime's own search picks, at most `steps`."""
    import numpy as np
    gen = og.Generator(model, og.GeneratorParams(model))
    gen.append_tokens(np.asarray([ids], np.int32))
    out = []
    while len(out) < steps and not gen.is_done():
        gen.generate_next_token()
        out.append(int(gen.get_next_tokens()[0]))
    return out


def _prompt(og, model, arrays, p, greedy, scratch):
    import numpy as np
    off = arrays["prompt_offsets"]
    ids = [int(i) for i in arrays["prompt_ids"][off[p]:off[p + 1]]]
    tokens = [int(t) for t in arrays["tokens"][p]]
    start = time.perf_counter()
    rows, error = _teacher_forced(og, model, ids, tokens)
    free = None
    if greedy and not error:
        try:
            free = _free_running(og, model, ids, len(tokens))
        except Exception as e:
            error = f"free-running: onnxruntime-genai: {' '.join(str(e).split())}"
    ms = (time.perf_counter() - start) * 1000
    path = os.path.join(scratch, "logits.npy")
    np.save(path, np.stack(rows) if rows else np.zeros((0, 0), np.float32))
    return {"prompt": p, "logits": path, "free_tokens": free, "ort_ms": ms, "error": error}


def main(argv):
    if len(argv) != 3:
        print("usage: python -m parity._genai_driver PACKAGE_DIR CORPUS_DIR SCRATCH_DIR", file=sys.stderr)
        return 2
    package, corpus_dir, scratch = argv
    try:
        og, model, hello = _load(package)
        arrays = _corpus(corpus_dir)
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _say(hello)
    for p in range(len(arrays["prompt_offsets"]) - 1):
        _say(_prompt(og, model, arrays, p, hello["greedy"], scratch))
        if not sys.stdin.readline():  # parity is gone or done with us
            return 0
    _say({"done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
