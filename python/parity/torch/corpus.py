"""PyTorch's greedy decode over a prompt corpus, kept as top-k logits plus the
log-sum-exp per step (``python -m parity.torch corpus``; docs/generation.md
"A prompt corpus").

For every prompt of PROMPTS.jsonl (one JSON object a line: ``input_ids``, a
list of token ids, and optionally ``text``) the step model runs PyTorch's
greedy decode for N steps from an empty cache (step 0 the prompt at once,
then one token a step, as ``dump --generate``). Per step it keeps PyTorch's
token, the k largest logits of the last position with their token ids, and
the log-sum-exp of the whole row (float64): O(prompts x steps x k) bytes,
never the vocabulary. ``parity check STEP.onnx --corpus DIR`` replays the
same tokens on ONNX Runtime (teacher forcing) and computes KL(PyTorch || ORT)
from them, with a bound on what the truncation to k can hide.

DIR/corpus.json (schema parity.corpus/1) names the step model's roles, the
empty cache each prompt starts from (shapes with a 0 on the sequence axis)
and the arrays, all .npy in DIR:
  prompt_offsets  int64 [P+1]    prompt p's ids are prompt_ids[off[p]:off[p+1]]
  prompt_ids      int64 [sum L]
  tokens          int64 [P, N]   PyTorch's greedy token per step
  topk_ids        int32 [P, N, k]
  topk_logits     float32 [P, N, k]  (descending)
  lse             float64 [P, N] log-sum-exp of the step's whole logits row
  kl_fp64         float64 [P, N] KL(float64 copy || PyTorch) per step, over the
                                 whole vocabulary: the copy is fed the same tokens
                                 and its own caches (the calibration: what float32
                                 rounding alone moves; absent with --no-fp64)
"""

import json
import os

import numpy as np

SCHEMA = "parity.corpus/1"
MAX_PROMPTS = 1 << 20
MAX_PROMPT_TOKENS = 1 << 16


class CorpusError(ValueError):
    """Bad input: one line naming the file, the line and the field."""


def read_prompts(path):
    """[(ids, text or None)] from a JSON-lines file; CorpusError names the line."""
    prompts = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"--prompts {path}: cannot read it: {e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}:{n}: not JSON: {e}") from None
        ids = rec.get("input_ids") if isinstance(rec, dict) else None
        if not isinstance(ids, list) or not ids or not all(isinstance(i, int) and not isinstance(i, bool)
                                                          and 0 <= i < 1 << 31 for i in ids):
            raise CorpusError(f"{path}:{n}: input_ids: expected a non-empty list of token ids (integers >= 0)")
        if len(ids) > MAX_PROMPT_TOKENS:
            raise CorpusError(f"{path}:{n}: input_ids: {len(ids)} tokens, more than {MAX_PROMPT_TOKENS}")
        text = rec.get("text")
        if text is not None and not isinstance(text, str):
            raise CorpusError(f"{path}:{n}: text: expected a string")
        prompts.append((ids, text))
    if not prompts:
        raise CorpusError(f"--prompts {path}: no prompt in it")
    if len(prompts) > MAX_PROMPTS:
        raise CorpusError(f"--prompts {path}: {len(prompts)} prompts, more than {MAX_PROMPTS}")
    return prompts


def _empty_pasts(model, plan, template):
    """{past: an empty tensor} of each cache, its sequence axis (where the
    present is longer than the past fed) set to 0; batch 1."""
    import torch

    from .flatten import flatten
    with torch.no_grad():
        out = dict(zip(plan.outputs, flatten(model(*[template[n] for n in plan.inputs]))))
    empty = {}
    for present, past in plan.kv:
        p, q = template[past], out[present]
        axes = [i for i in range(p.dim()) if p.shape[i] != q.shape[i]]
        if len(axes) != 1 or p.dim() != q.dim():
            raise CorpusError(f"cache {past}: cannot find its sequence axis ({list(p.shape)} -> {list(q.shape)})")
        shape = list(p.shape)
        shape[axes[0]], shape[0] = 0, 1
        empty[past] = torch.zeros(shape, dtype=p.dtype)
    return empty


def _prompt_state(plan, template, empty, ids):
    import torch
    n = len(ids)
    state = dict(empty)
    state[plan.token] = torch.tensor([ids], dtype=template[plan.token].dtype)
    if plan.mask:
        state[plan.mask] = torch.ones(1, n, dtype=template[plan.mask].dtype)
    if plan.positions:
        state[plan.positions] = torch.arange(n, dtype=template[plan.positions].dtype).view(1, n)
    missing = [x for x in plan.inputs if x not in state]
    if missing:
        raise CorpusError(f"the step model's input(s) {', '.join(missing)} are neither ids, mask, positions "
                          "nor a cache: a corpus feeds only those (an encoder-decoder is not supported)")
    return state


class _Calibration:
    """KL(float64 copy || the model) per step, the copy fed the same tokens."""

    def __init__(self, model, plan):
        import copy
        self.model64, self.plan = copy.deepcopy(model).double().eval(), plan

    def start(self, state):
        self.state = {n: t.double() if t.is_floating_point() else t for n, t in state.items()}

    def step(self, state, last, tokens):
        import torch

        from .flatten import flatten
        from .generate import next_state
        self.state[self.plan.token] = state[self.plan.token]
        out = dict(zip(self.plan.outputs, flatten(self.model64(*[self.state[n] for n in self.plan.inputs]))))
        p = torch.log_softmax(out[self.plan.logits][0, -1].double(), 0)
        q = torch.log_softmax(last[0].double(), 0)
        self.state = next_state(self.plan, self.state, out, tokens)
        return max(0.0, float((p.exp() * (p - q)).sum()))


def record_corpus(model, plan, template, prompts, steps, k, progress=None, fp64=True):
    """The arrays of DIR (see the module's docstring) for `prompts`."""
    import torch

    from .generate import greedy
    empty = _empty_pasts(model, plan, template)
    shape = (len(prompts), steps)
    arrays = {"tokens": np.zeros(shape, np.int64), "topk_ids": np.zeros(shape + (k,), np.int32),
              "topk_logits": np.zeros(shape + (k,), np.float32), "lse": np.zeros(shape, np.float64)}
    if fp64:
        arrays["kl_fp64"], cal = np.zeros(shape, np.float64), _Calibration(model, plan)
    with torch.no_grad():
        for p, (ids, _) in enumerate(prompts):
            state = _prompt_state(plan, template, empty, ids)
            if fp64:
                cal.start(state)
            for s, step in enumerate(greedy(model, plan, state, steps)):
                fed, _, last, tok = step[:4]  # (state, outputs, last logits, tokens, ...)
                row = last[0].float()
                if k > row.numel():
                    raise CorpusError(f"--top-k {k}: more than the vocabulary ({row.numel()})")
                values, index = torch.topk(row, k)  # descending; ties by index as torch's argmax
                arrays["tokens"][p, s] = int(tok[0])
                arrays["topk_ids"][p, s], arrays["topk_logits"][p, s] = index.numpy(), values.numpy()
                arrays["lse"][p, s] = float(torch.logsumexp(row.double(), 0))
                if fp64:
                    arrays["kl_fp64"][p, s] = cal.step(fed, last, tok)
            if progress:
                progress(p + 1, len(prompts))
    return arrays, empty


def write_corpus(out, spec, plan, template, prompts, steps, k, arrays, empty, vocab):
    os.makedirs(out, exist_ok=True)
    ids = [i for p, _ in prompts for i in p]
    offsets = np.cumsum([0] + [len(p) for p, _ in prompts]).astype(np.int64)
    arrays = dict(arrays, prompt_offsets=offsets, prompt_ids=np.asarray(ids, np.int64))
    for name, a in arrays.items():
        np.save(os.path.join(out, f"{name}.npy"), np.ascontiguousarray(a))
    dtype = {n: str(template[n].dtype).replace("torch.", "") for n in plan.inputs}
    manifest = {
        "schema": SCHEMA, "model": spec, "prompts": len(prompts), "steps": steps, "top_k": k, "vocab": vocab,
        **{key: v for key, v in plan.record().items() if key != "encoder_feeds"},
        "inputs": [{"name": n, "dtype": dtype[n], "shape": list(empty[n].shape) if n in empty else None}
                   for n in plan.inputs],
        "texts": [t for _, t in prompts],
        "files": {name: f"{name}.npy" for name in arrays},
    }
    tmp = os.path.join(out, "corpus.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f)
    os.replace(tmp, os.path.join(out, "corpus.json"))
    return manifest


def add_parser(sub):
    c = sub.add_parser("corpus", help="PyTorch's greedy decode over a prompt corpus, as top-k logits per step")
    c.add_argument("model", metavar="MODULE:FACTORY", help="the step model's factory (it has make_inputs(seed))")
    c.add_argument("--prompts", required=True, metavar="PROMPTS.jsonl",
                   help='one JSON object a line: {"input_ids": [...], "text": "..."}')
    c.add_argument("--generate", type=int, default=32, metavar="N", help="steps per prompt (default 32)")
    c.add_argument("--top-k", type=int, default=64, metavar="K", help="logits kept per step (default 64)")
    c.add_argument("--kwargs", default="{}", help="JSON keyword arguments for the factory")
    c.add_argument("--output-names", default=None, metavar="A,B,...", help="ONNX output names")
    c.add_argument("--kv-map", default=None, metavar="PRESENT=PAST,...")
    c.add_argument("--seed", type=int, default=0, help="seed for the weights (the factory's) and the template")
    c.add_argument("-o", "--out", required=True, metavar="DIR")
    c.add_argument("--quiet", action="store_true", help="no progress on stderr")
    c.add_argument("--no-fp64", dest="fp64", action="store_false",
                   help="no float64 calibration (kl_fp64: the tolerance is then --kl-tolerance's default)")


def cmd_corpus(a, load_factory, usage_error):
    """`python -m parity.torch corpus`; bad input raises usage_error (exit 2)."""
    import sys
    if not 1 <= a.generate <= 65536 or not 1 <= a.top_k <= 65536:
        raise usage_error("--generate and --top-k: between 1 and 65536")
    factory = load_factory(a.model)
    try:
        prompts, kwargs = read_prompts(a.prompts), json.loads(a.kwargs)
    except (CorpusError, json.JSONDecodeError) as e:
        raise usage_error(str(e)) from None
    import torch

    from .generate import plan_for
    from .signature import input_names_for
    torch.manual_seed(a.seed)
    model = factory(**kwargs).eval()
    if not hasattr(model, "make_inputs"):
        raise usage_error(f"model '{a.model}' has no make_inputs(seed): the corpus needs its inputs' dtypes")
    args = tuple(model.make_inputs(a.seed))
    names = input_names_for(model, args, {})
    outputs = a.output_names.split(",") if a.output_names else None
    try:
        plan, template, encoder = plan_for(model, args, names, outputs, a.seed, a.kv_map)
        if encoder is not None:
            raise CorpusError("an encoder-decoder step model: the corpus check takes decoder-only steps")
        with torch.no_grad():
            vocab = int(dict(zip(plan.outputs, _flat(model(*args))))[plan.logits].shape[-1])
        bad = next(((n, i) for n, (p, _) in enumerate(prompts, 1) for i in p if i >= vocab), None)
        if bad:
            raise CorpusError(f"{a.prompts}: prompt {bad[0]}: token id {bad[1]} is not below the vocabulary ({vocab})")

        def progress(done, total):
            if not a.quiet and (done == total or done % max(1, total // 20) == 0):
                print(f"parity.torch: corpus: {done}/{total} prompts", file=sys.stderr, flush=True)

        arrays, empty = record_corpus(model, plan, template, prompts, a.generate, a.top_k, progress, a.fp64)
    except ValueError as e:
        raise usage_error(str(e)) from None
    write_corpus(a.out, a.model, plan, template, prompts, a.generate, a.top_k, arrays, empty, vocab)
    per_step = a.top_k * 8 + 16
    print(f"parity.torch: corpus of {len(prompts)} prompts x {a.generate} steps, top-{a.top_k} of {vocab} logits "
          f"({per_step} bytes a step) -> {a.out}")
    return 0


def _flat(x):
    from .flatten import flatten
    return flatten(x)
