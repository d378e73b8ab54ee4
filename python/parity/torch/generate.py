"""PyTorch's greedy decode of a step model, recorded for `parity check`
(dump --generate N; docs/generation.md).

A step model takes token ids, optionally an attention mask and positions, and
a past per KV-cache pair, and returns logits [batch, seq, vocab] and a present
per pair. From the prompt (the dump's inputs) it runs:
  prefill      the prompt in one call: step 0, its token the argmax of the
               last position's logits;
  steps 1..N-1 one token each: the previous token, the mask one longer, the
               positions one on, each past the previous step's present;
  stepwise     the prompt fed one token at a time (when it holds more than
               one): its last logits and presents must equal the prefill's.
Each step's last-position logits are written (and a float64 copy's, fed the
same tokens and its own caches: the step's calibration), its presents too
(only their statistics past `cache_limit` bytes a step). An encoder-decoder
(the step model has `encoder` and `make_encoder_inputs(seed)`) runs its
encoder first; the encoder's outputs named like a step input (or a
present_X feeding past_X) feed every step unchanged (cross-attention caches).
"""

import copy
import re

import torch

from .flatten import flatten
from .kv_names import find_kv_pairs
from .roles import role_from_name
from .tensors import sanitize

SCHEMA = "parity.generation/1"


class Plan:
    """Which input and output is what, for one step model."""

    def __init__(self, input_names, output_names, kv_pairs, feeds=None):
        self.inputs, self.outputs, self.kv = list(input_names), list(output_names), list(kv_pairs)
        roles = {n: role_from_name(n) for n in self.inputs}
        cached = {past for _, past in self.kv}
        self.feeds = dict(feeds or {})  # step input -> encoder output
        self.token = _first(n for n in self.inputs if roles[n] == "ids" and n not in cached)
        self.mask = _first(n for n in self.inputs if roles[n] == "mask")
        self.positions = _first(n for n in self.inputs if roles[n] == "positions")
        # A merged decoder's branch flag (optimum's use_cache_branch): False at
        # the prefill (nothing cached), True at every later step.
        self.cache_branch = _first(n for n in self.inputs if _CACHE_BRANCH.search(n))
        presents = {p for p, _ in self.kv}
        self.logits = _first(n for n in self.outputs if "logit" in n.lower()) or _first(
            n for n in self.outputs if n not in presents)
        if self.token is None:
            raise ValueError(f"--generate: no token ids input among {', '.join(self.inputs)} "
                             "(an input named input_ids, *_ids or *token*)")
        if self.logits is None:
            raise ValueError("--generate: no logits output (every output is a present)")
        if not self.kv:
            raise ValueError(f"--generate: no KV-cache pair found from the names (inputs: {', '.join(self.inputs)}; "
                             f"outputs: {', '.join(self.outputs)}); give --kv-map PRESENT=PAST,...")

    def record(self):
        return {"token_input": self.token, "mask_input": self.mask, "positions_input": self.positions,
                "cache_branch_input": self.cache_branch, "logits_output": self.logits,
                "kv_map": [{"present": p, "past": q} for p, q in self.kv],
                "encoder_feeds": [{"input": i, "encoder_output": o} for i, o in self.feeds.items()]}


_CACHE_BRANCH = re.compile(r"use_cache_branch|cache_branch", re.I)


def _first(items):
    return next(iter(items), None)


def greedy(model, plan, state, steps, search=None):
    """Yields (state fed, outputs by name, last logits, tokens, origins,
    draws) for `steps` steps from `state` (input name -> tensor), each
    step's tokens chosen by `search` (search.py; None: greedy). origins: the
    row each new row continues (beam search), else None; draws: the sampling's."""
    for _ in range(steps):
        outputs = dict(zip(plan.outputs, flatten(model(*[state[n] for n in plan.inputs]))))
        last = outputs[plan.logits][:, -1, :]
        tokens, origins, draws = search.choose(last) if search else (last.argmax(dim=-1), None, None)
        yield state, outputs, last, tokens, origins, draws
        state = next_state(plan, state, outputs, tokens, origins)


def next_state(plan, state, outputs, tokens, origins=None):
    """The next step's inputs: the tokens, the mask one longer, the positions
    one on, each past its present; other inputs unchanged. With `origins`
    (beam search), every batch-first input and present first takes the rows
    its beams continue."""
    if origins is not None:
        from .search import reorder
        rows = state[plan.token].shape[0]
        batch_first = [n for n in plan.inputs if n != plan.cache_branch and isinstance(state[n], torch.Tensor)
                       and state[n].dim() > 0 and state[n].shape[0] == rows]
        state = reorder(state, origins, batch_first)
        outputs = reorder(outputs, origins, [p for p, _ in plan.kv])
    nxt = dict(state)
    ids = state[plan.token]
    nxt[plan.token] = tokens.view(-1, 1).to(ids.dtype)
    if plan.mask:
        mask = state[plan.mask]
        nxt[plan.mask] = torch.cat([mask, torch.ones(mask.shape[0], 1, dtype=mask.dtype)], dim=-1)
    if plan.positions:
        nxt[plan.positions] = state[plan.positions][..., -1:] + 1
    if plan.cache_branch:
        nxt[plan.cache_branch] = torch.ones_like(state[plan.cache_branch])
    for present, past in plan.kv:
        nxt[past] = outputs[present]
    return nxt


def stepwise_state(plan, prompt, j):
    """The prompt's token j alone, after tokens 0..j-1 (their caches set by the caller)."""
    state = dict(prompt)
    ids = prompt[plan.token]
    state[plan.token] = ids[:, j:j + 1]
    if plan.mask:
        mask = prompt[plan.mask]
        state[plan.mask] = mask[:, :mask.shape[-1] - ids.shape[-1] + j + 1]
    if plan.positions:
        state[plan.positions] = prompt[plan.positions][..., j:j + 1]
    if plan.cache_branch and j > 0:
        state[plan.cache_branch] = torch.ones_like(prompt[plan.cache_branch])
    return state


def run_stepwise(model, plan, prompt):
    """The prompt one token at a time: (last logits, presents) after its last token."""
    outputs = None
    for j in range(prompt[plan.token].shape[-1]):
        fed = stepwise_state(plan, prompt, j)
        for present, past in plan.kv:
            fed[past] = outputs[present] if outputs is not None else prompt[past]
        outputs = dict(zip(plan.outputs, flatten(model(*[fed[n] for n in plan.inputs]))))
    return outputs[plan.logits][:, -1, :], outputs


class Writer:
    """Writes generate/*.npy into the dump; `write(fname, tensor)` is the
    dumper's (it records the file as written)."""

    def __init__(self, write, cache_limit):
        self.write, self.cache_limit = write, cache_limit

    def tensor(self, name, tensor):
        entry = self.write(f"generate/{sanitize(name)}.npy", tensor)
        return entry["file"]

    def presents(self, prefix, plan, outputs):
        total = sum(outputs[p].numel() * outputs[p].element_size() for p, _ in plan.kv)
        out = {}
        for present, _ in plan.kv:
            t = outputs[present]
            if total <= self.cache_limit:
                out[present] = {"file": self.tensor(f"{prefix}_{present}", t), "shape": list(t.shape)}
            else:
                from .tensors import stats
                out[present] = {"file": None, "shape": list(t.shape), **stats(t)}
        return out


def record_generation(model, plan, prompt, steps, writer, fp64=True, encoder=None, search=None):
    """The manifest's "generation" (files through `writer`). `prompt`: input
    name -> tensor; `encoder`: the encoder's record (encode()) or None;
    `search`: search.Search (None: greedy)."""
    with torch.no_grad():
        model64 = _fp64_copy(model) if fp64 else None
        prompt64 = {n: _double(t) for n, t in prompt.items()}
        state64, records = prompt64, []
        for k, (state, outputs, last, tokens, origins, draws) in enumerate(greedy(model, plan, prompt, steps, search)):
            entry = {"step": k, "kind": "prefill" if k == 0 else "decode",
                     "input_ids": state[plan.token].tolist(), "tokens": tokens.tolist(),
                     "logits": writer.tensor(f"step{k:03d}_logits", last),
                     "presents": writer.presents(f"step{k:03d}", plan, outputs)}
            if origins is not None:
                entry["origins"] = origins.tolist()
                entry["scores"] = search.scores.tolist()
            if draws is not None:
                entry["draws"] = draws
            if model64 is not None:
                state64[plan.token] = state[plan.token]
                out64 = dict(zip(plan.outputs, flatten(model64(*[state64[n] for n in plan.inputs]))))
                entry["logits_fp64"] = writer.tensor(f"step{k:03d}_logits_fp64", out64[plan.logits][:, -1, :])
                state64 = next_state(plan, state64, out64, tokens, origins)
            records.append(entry)
        stepwise = None
        if prompt[plan.token].shape[-1] > 1:
            last, outputs = run_stepwise(model, plan, prompt)
            stepwise = {"logits": writer.tensor("stepwise_logits", last),
                        "presents": writer.presents("stepwise", plan, outputs)}
    return {"schema": SCHEMA, "length": steps, "batch": int(prompt[plan.token].shape[0]),
            "prompt_length": int(prompt[plan.token].shape[-1]), **plan.record(),
            "search": search.record() if search else {"kind": "greedy", "beams": 1},
            "encoder": encoder, "steps": records, "stepwise": stepwise}


def _double(t):
    return t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t


def _fp64_copy(model):
    try:
        return copy.deepcopy(model).double().eval()
    except Exception:  # noqa: BLE001 -- no calibration then; the check says so
        return None


def run_encoder(model, seed, step_inputs):
    """Runs model.encoder on model.make_encoder_inputs(seed): ({input: tensor},
    {output: tensor}, {step input: encoder output}) where the feeds are the
    outputs named like a step input, or a present_X of a step's past_X."""
    from .signature import input_names_for, split_args
    pos, kw = split_args(tuple(model.make_encoder_inputs(seed)))
    names = input_names_for(model.encoder, pos, kw, getattr(model, "encoder_input_names", None))
    with torch.no_grad():
        result = flatten(model.encoder.eval()(*pos, **kw))
    out_names = list(getattr(model, "encoder_output_names", None) or [f"encoder_output_{i}" for i in range(len(result))])
    outputs = dict(zip(out_names, result))
    feeds = {n: n for n in out_names if n in step_inputs}
    for present, past in find_kv_pairs(step_inputs, out_names):
        feeds.setdefault(past, present)
    return dict(zip(names, flatten((pos, kw)))), outputs, feeds


def state_at_step(model, args, input_names, output_names, step, seed, kv_map=None):
    """The step model's inputs at step `step` of PyTorch's greedy decode from
    `args` (0: the prompt): what `dump --at-step K` dumps as its traced
    sample, so that `parity locate --reference torch:DUMP` localizes that step."""
    plan, prompt, _ = plan_for(model, args, input_names, output_names, seed, kv_map)
    with torch.no_grad():
        for k, (state, *_) in enumerate(greedy(model, plan, prompt, step + 1)):
            if k == step:
                return tuple(state[n] for n in input_names)
    raise AssertionError("unreachable")


def plan_for(model, args, input_names, output_names, seed, kv_map=None):
    """(Plan, the prompt {input: tensor}, the encoder's (inputs, outputs,
    feeds) or None) for a step model and its prompt `args`; the prompt's
    encoder feeds are the encoder's own outputs."""
    from .kv_names import parse_kv_map
    from .signature import split_args
    pos, kw = split_args(args)
    tensors = flatten((pos, kw))
    if len(tensors) != len(pos) + len(kw) or len(tensors) != len(input_names):
        raise ValueError("--generate: the step model's inputs must be tensors, one per argument")
    with torch.no_grad():
        outputs = flatten(model(*pos, **kw))
    output_names = list(output_names or [])
    output_names = output_names[:len(outputs)] + [f"output_{i}" for i in range(len(output_names), len(outputs))]
    pairs = parse_kv_map(kv_map, input_names, output_names) if kv_map else find_kv_pairs(input_names, output_names)
    prompt = dict(zip(input_names, tensors))
    encoder, feeds = None, {}
    if hasattr(model, "encoder") and hasattr(model, "make_encoder_inputs"):
        enc_inputs, enc_outputs, feeds = run_encoder(model, seed, input_names)
        prompt.update({inp: enc_outputs[out] for inp, out in feeds.items()})
        encoder = (enc_inputs, enc_outputs, feeds)
    return Plan(input_names, output_names, pairs, feeds), prompt, encoder


def prepare(model, args, input_names, output_names, steps, seed, kv_map=None, fp64=True, cache_limit=64 << 20,
            search=None):
    """(the prompt's args, generation(write) -> the manifest's "generation")
    for dump(): `write(fname, tensor)` writes one file of the dump. The
    prompt's encoder feeds are replaced by the encoder's own outputs.
    `search`: search.Search (beam search or sampling; None: greedy)."""
    if search is not None and search.beams > 1 and int(args[0].shape[0] if isinstance(args, tuple) else 1) != 1:
        raise ValueError("--beams: a prompt of batch 1")
    plan, prompt, encoder = plan_for(model, args, input_names, output_names, seed, kv_map)

    def generation(write):
        writer = Writer(write, cache_limit)
        enc = None
        if encoder is not None:
            enc = {"inputs": {n: writer.tensor(f"encoder_input_{n}", t) for n, t in encoder[0].items()},
                   "outputs": {n: writer.tensor(f"encoder_output_{n}", t) for n, t in encoder[1].items()}}
        return record_generation(model, plan, prompt, steps, writer, fp64=fp64, encoder=enc, search=search)

    return tuple(prompt[n] for n in input_names), generation
