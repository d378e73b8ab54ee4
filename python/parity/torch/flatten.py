"""Flattening of module inputs/outputs into a list of tensors.

Order follows what the ONNX exporters do with nested outputs: tuples, lists
and namedtuples in order, dicts (and ModelOutput-like OrderedDicts) by
insertion order of their values, dataclasses by field order. Non-tensor
leaves (None, ints, strings) are skipped and take no position.
"""

import dataclasses

import torch


def flatten(value):
    """Returns the tensors in value, depth first, in the order described above."""
    out = []
    _walk(value, out)
    return out


def _walk(value, out):
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _walk(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _walk(v, out)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _walk(getattr(value, f.name), out)


def is_single_tensor(value):
    """True when value is one bare tensor (its output_index is then null)."""
    return isinstance(value, torch.Tensor)
