"""What an input is for (its role), and values that fit it.

A sequence model's integer inputs are not arbitrary numbers: token ids index
an embedding table (an id past its rows is an error in PyTorch and garbage in
ONNX Runtime), an attention mask is 0/1, positions count tokens. Roles:
  ids        an int input the model passes to an embedding (found by running
             it once: probe_vocab), or named like one (input_ids, *_ids,
             tokens); its range is the table's row count when known
  mask       named *mask*: 0/1
  positions  named position*/cache_position: 0, 1, ... along the last axis
  cache      named past_key*/past_value*/past_key_values.*/*cache*: a KV
             cache, whose length (the past) may be 0
Names are hints only: an input's role decides its values, never its shape.
"""

import re

import torch

from .control_flow import eager_cond
from .signature import split_args

_NAME_ROLES = (
    ("positions", re.compile(r"position|pos_ids", re.I)),
    ("mask", re.compile(r"mask", re.I)),
    ("cache", re.compile(r"past_key|past_value|key_values|(^|[._])past([._]|$)|cache|(^|_)kv(_|$)", re.I)),
    ("ids", re.compile(r"input_ids|token|(^|_)ids$", re.I)),
)
_EMBEDDINGS = tuple(f for f in (getattr(torch.nn.functional, "embedding", None),
                                getattr(torch.nn.functional, "embedding_bag", None),
                                getattr(torch, "embedding", None)) if f is not None)


def role_from_name(name):
    """'positions' | 'mask' | 'cache' | 'ids' | None, from the input's name."""
    for role, pattern in _NAME_ROLES:
        if pattern.search(name):
            return role
    return None


def probe_vocab(model, args, names):
    """{input name: row count of the embedding table it indexes} for the
    integer inputs of args that the model passes to an embedding (nn.Embedding,
    F.embedding, EmbeddingBag), or a view of them. Runs the model once, in
    eval mode without grad; {} when that run raises."""
    pos_args, kw_args = split_args(args)
    inputs = {n: t for n, t in zip(names, list(pos_args) + list(kw_args.values()))
              if isinstance(t, torch.Tensor) and not t.is_floating_point() and t.numel()}
    if not inputs:
        return {}
    found = {}
    owners = {_storage(t): n for n, t in inputs.items()}

    class Watch(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, fargs=(), kwargs=None):
            kwargs = kwargs or {}
            if func in _EMBEDDINGS and len(fargs) >= 2 and isinstance(fargs[0], torch.Tensor):
                name = owners.get(_storage(fargs[0]))
                if name is not None and isinstance(fargs[1], torch.Tensor):
                    found[name] = min(found.get(name, fargs[1].shape[0]), fargs[1].shape[0])
            return func(*fargs, **kwargs)

    training = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        with torch.no_grad(), eager_cond(), Watch():
            model(*pos_args, **kw_args)
    except Exception:  # noqa: BLE001 -- a probe: the real run says what is wrong
        return {}
    finally:
        for m, flag in training:
            m.training = flag
    return found


def _storage(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except (AttributeError, RuntimeError):
        return id(tensor)


def role_input(role, shape, dtype, generator, vocab=None, offset=0):
    """A tensor for an input of this role (None: the caller's default):
    ids in [0, vocab) (vocab unknown: None); a mask of a batch as served
    (padding_rows, `offset` cached before the new tokens); positions offset,
    offset+1, ... along the last axis (served_positions: per row, after a mask)."""
    if dtype.is_floating_point and role != "mask":
        return None
    if role == "ids" and vocab:
        return torch.randint(0, vocab, shape, generator=generator).to(dtype)
    if role == "mask" and shape:
        mask = torch.ones(shape, dtype=torch.int64)
        if mask.numel():
            rows = mask.view(-1, shape[-1])
            for b in range(1, rows.shape[0]):
                begin, end = padding_rows(b, shape[-1], offset)
                rows[b, begin:end] = 0
        return mask.to(dtype)
    if role == "positions" and shape:
        return (torch.arange(shape[-1]) + offset).expand(*shape).contiguous().to(dtype)
    return None


def padding_rows(b, length, past):
    """[begin, end) of row b's padding, as parity's generated masks (docs/inputs.md
    "Batches as served"): min(b, length-1) zeros (no row all padding), by b % 3:
    1 at the start (left padding), 2 at the end of the past (a past right-padded,
    then decoded on; at the end without a past), 0 at the end (right padding)."""
    pad = min(b, length - 1)
    if pad <= 0:
        return 0, 0
    if b % 3 == 1:
        return 0, pad
    if b % 3 == 2 and 0 < past < length:
        return past - min(pad, past), past
    return length - pad, length


def served_positions(mask, seq):
    """The last `seq` positions of each row of a 2-d mask as transformers'
    generate makes them: the mask's cumulative sum - 1, 1 where it is 0."""
    pos = mask.long().cumsum(-1) - 1
    return pos.masked_fill(mask == 0, 1)[:, mask.shape[-1] - seq:]


def positions_offset(shapes, roles, seq):
    """Where a sequence's positions start: the attention mask's length less
    the sequence's (the past before it), when a mask is there; else 0."""
    for name, shape in shapes.items():
        if roles.get(name) == "mask" and shape and shape[-1] >= seq:
            return shape[-1] - seq
    return 0


def inputs_for(model, specs, seed):
    """The model's inputs from --input specs [(name, shape, dtype)], values
    fit to each input's role: float inputs random normal; token ids in the
    vocabulary of the embedding the model passes them to (probe_vocab, one
    run with placeholder ids 0), else 0..9; masks 0/1 with padding (role_input);
    positions after the mask's past, per row after the tokens it keeps (a
    position read by an embedding too); other integers 0..9, bools 0/1."""
    names = [n for n, _, _ in specs]
    roles = {n: role_from_name(n) for n in names}
    shapes = {n: list(shape) for n, shape, _ in specs}

    seq = next((s[-1] for n, s in shapes.items() if roles[n] in ("ids", "positions") and s), 0)

    def make(vocab, probing):
        g, out = torch.Generator().manual_seed(seed), []
        for name, shape, dtype in specs:
            # positions read by an embedding (GPT-2's wpe) are positions all the same
            role = "ids" if name in vocab and roles[name] != "positions" else roles[name]
            offset = positions_offset(shapes, roles, seq if role == "mask" else shape[-1] if shape else 0)
            t = role_input(role, shape, dtype, g, vocab=vocab.get(name), offset=offset)
            if t is None and probing and not dtype.is_floating_point:
                t = torch.zeros(shape, dtype=dtype)  # a valid row of any embedding table
            out.append(t if t is not None else _plain(shape, dtype, g))
        return _positions_per_row(names, roles, out)

    vocab = {}
    if any(not dtype.is_floating_point for _, _, dtype in specs):
        vocab = probe_vocab(model, make({}, True), names)
    return make(vocab, False)


def _positions_per_row(names, roles, values):
    """The positions continue each row's kept tokens when a 2-d mask covers them."""
    mask = next((v for n, v in zip(names, values) if roles[n] == "mask" and v.dim() == 2), None)
    out = list(values)
    for i, n in enumerate(names):
        p = out[i]
        if (roles[n] == "positions" and mask is not None and not p.is_floating_point() and p.dim() == 2
                and p.shape[0] == mask.shape[0] and p.shape[1] <= mask.shape[1]):
            out[i] = served_positions(mask, p.shape[1]).to(p.dtype)
    return tuple(out)


def _plain(shape, dtype, generator):
    """Random normal for floating types, 0/1 for bool, integers 0..9."""
    if dtype.is_floating_point:
        return torch.randn(*shape, generator=generator).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    return torch.randint(0, 10, shape, generator=generator).to(dtype)
