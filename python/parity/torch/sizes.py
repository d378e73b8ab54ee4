"""Sizes other than the traced one, for every dynamic axis an export declares.

A trace holds the sizes it ran at: an export that turned a shape into a
constant (`float(images.shape[3])` under the TorchScript exporter) is right at
the traced size and wrong at every other. parity can only tell by running
PyTorch at other sizes too, so the dump holds, besides the traced sample, one
sample per other size (docs/contract.md, "Files": `sizes`).

default_sizes() picks them from the dynamic axes: for each label (axes that
share a label change together, as they share a symbol in the file) a smaller
and a larger size, or 2 where the traced size is 1 (batch > 1). parse_sizes()
reads `--sizes` (one sample per value: NAME=SHAPE[,NAME=SHAPE...]).
"""

import re

import torch

from .tensors import sanitize


def default_sizes(input_shapes, dynamic_axes):
    """input_shapes: {input name: [dims]} (the traced sample's, in order);
    dynamic_axes: {name: {"axis": label}} (export records' normalized form;
    entries for outputs are ignored). Returns [(sample name, {input name:
    shape})], e.g. [("batch2", {"images": [2, 3, 64, 64]}), ...]."""
    labels = {}
    for name, axes in (dynamic_axes or {}).items():
        shape = input_shapes.get(name)
        if shape is None:
            continue
        for axis, label in axes.items():
            a = int(axis)
            if 0 <= a < len(shape):
                traced, where = labels.setdefault(label, (shape[a], []))
                where.append((name, a))
    samples = []
    for label, (traced, where) in labels.items():
        for size in _other_sizes(traced):
            shapes = {n: list(s) for n, s in input_shapes.items()}
            for n, a in where:
                shapes[n][a] = size
            samples.append((sanitize(f"{label}{size}"), shapes))
    return samples


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


def sized_args(args, input_names, shapes, seed):
    """The positional args with each named input replaced by a random tensor
    of its new shape (seeded); None when args are not one tensor per input
    (nested or keyword inputs: give those sizes by dumping again)."""
    if not isinstance(args, tuple) or len(args) != len(input_names) or \
            not all(isinstance(a, torch.Tensor) for a in args):
        return None
    g = torch.Generator().manual_seed(seed)
    return tuple(make_like(a, shapes[n], g) if n in shapes and list(shapes[n]) != list(a.shape) else a
                 for n, a in zip(input_names, args))
