"""Sizes other than the traced one, for every dynamic axis an export declares.

A trace holds the sizes it ran at: an export that turned a shape into a
constant (`float(images.shape[3])` under the TorchScript exporter) is right at
the traced size and wrong at every other. parity can only tell by running
PyTorch at other sizes too, so the dump holds, besides the traced sample, one
sample per other size (docs/contract.md, "Files": `sizes`).

default_sizes() picks them from the dynamic axes: for each free label (axes
that share a label change together, as they share a symbol in the file; a
KV cache's mask, past and sequence keep their relations: relations.py) a
smaller and a larger size, or 2 where the traced size is 1 (batch > 1), and
0 for a cache's length (the first step, nothing cached). parse_sizes() reads
`--sizes` (one sample per value: NAME=SHAPE[,NAME=SHAPE...]).
"""

import re

import torch

from .relations import learn
from .roles import positions_offset, role_from_name, role_input
from .tensors import sanitize


def default_sizes(input_shapes, dynamic_axes, roles=None, file_dims=None):
    """input_shapes: {input name: [dims]} (the traced sample's, in order);
    dynamic_axes: {name: {"axis": label}} (export records' normalized form;
    entries for outputs are ignored); roles, file_dims: as relations.learn.
    Returns [(sample name, {input name: shape})], e.g. [("batch2", {"images":
    [2, 3, 64, 64]}), ...]; plan_sizes() also returns the relations."""
    return plan_sizes(input_shapes, dynamic_axes, roles, file_dims)[0]


def plan_sizes(input_shapes, dynamic_axes, roles=None, file_dims=None):
    """(default_sizes' samples, the relations.Relations they keep)."""
    rel = learn(input_shapes, dynamic_axes, roles, file_dims)
    samples = []
    for name, sizes in rel.joint(_other_sizes):
        shapes = {n: list(s) for n, s in input_shapes.items()}
        for label, size in sizes.items():
            for n, a in rel.where[label]:
                shapes[n][a] = size
        samples.append((sanitize(name), shapes))
    return samples, rel


def _other_sizes(traced):
    """A smaller and a larger size than the traced one; 2 for a traced 1."""
    if traced <= 1:
        return [2]
    return [traced // 2, traced * 2]


def parse_sizes(specs, input_names):
    """['images=2x3x32x96', 'a=1x4,b=1x4'] -> [(sample name, {name: shape})].
    Every input named must be one of input_names; inputs left out keep the
    traced shape (the caller fills them). Raises ValueError with the spec."""
    samples = []
    for spec in specs:
        shapes = {}
        for part in spec.split(","):
            m = re.fullmatch(r"([^=]+)=(\d+(?:x\d+)*)", part.strip())
            if not m:
                raise ValueError(f"--sizes '{spec}': expected NAME=SHAPE[,NAME=SHAPE...], e.g. images=2x3x32x96")
            if m.group(1) not in input_names:
                raise ValueError(f"--sizes '{spec}': no input '{m.group(1)}' (inputs: {', '.join(input_names)})")
            shapes[m.group(1)] = [int(d) for d in m.group(2).split("x")]
        name = sanitize("_".join("x".join(map(str, s)) for s in shapes.values()))
        samples.append((name, shapes))
    return samples


def make_like(reference, shape, generator):
    """A tensor of `shape` with reference's dtype: random normal for floating
    types; for integer and bool inputs (token ids, attention masks) the traced
    values tiled and cropped to the new shape, so a mask keeps its pattern. A
    random 0/1 mask can mask a whole row (GPT-2's first position), where
    PyTorch and ONNX Runtime legitimately differ, and would be a false alarm."""
    if reference.is_floating_point():
        return torch.randn(*shape, generator=generator).to(reference.dtype)
    if reference.dim() != len(shape) or reference.numel() == 0:
        low = int(reference.min()) if reference.numel() else 0
        high = int(reference.max()) + 1 if reference.numel() else 10
        return torch.randint(low, max(high, low + 1), shape, generator=generator).to(reference.dtype)
    t = reference
    for axis, size in enumerate(shape):
        reps = [1] * t.dim()
        reps[axis] = -(-size // t.shape[axis])
        t = t.repeat(*reps).narrow(axis, 0, size)
    return t.clone()


def sized_args(args, input_names, shapes, seed, roles=None):
    """The positional args with each named input replaced by a random tensor
    of its new shape (seeded); None when args are not one tensor per input
    (nested or keyword inputs: give those sizes by dumping again). Positions
    that continued the traced mask (past, past+1, ...) continue the new one.
    roles: {input name: role} (default: from the names)."""
    if not isinstance(args, tuple) or len(args) != len(input_names) or \
            not all(isinstance(a, torch.Tensor) for a in args):
        return None
    roles = roles or {n: role_from_name(n) for n in input_names}
    traced = {n: list(a.shape) for n, a in zip(input_names, args)}
    new = {n: list(shapes.get(n, traced[n])) for n in input_names}
    g = torch.Generator().manual_seed(seed)
    out = []
    for n, a in zip(input_names, args):
        if roles.get(n) == "positions" and _continues(a, positions_offset(traced, roles, a.shape[-1] if a.dim() else 0)):
            out.append(role_input("positions", new[n], a.dtype, g, offset=positions_offset(new, roles, new[n][-1])))
        elif new[n] != traced[n]:
            out.append(make_like(a, new[n], g))
        else:
            out.append(a)
    return tuple(out)


def _continues(positions, offset):
    """True for integer positions offset, offset+1, ... along the last axis."""
    if positions.is_floating_point() or positions.dim() == 0 or positions.numel() == 0:
        return False
    want = torch.arange(positions.shape[-1]) + offset
    return bool((positions.to(torch.int64) == want).all())
