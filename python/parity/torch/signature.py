"""Splitting export-style args and naming the model's inputs."""

import inspect

import torch

from .flatten import flatten


def split_args(args):
    """torch.onnx.export's convention: a tensor, or a tuple whose last element
    may be a dict of keyword arguments. Returns (positional tuple, kwargs dict)."""
    if isinstance(args, torch.Tensor):
        return (args,), {}
    if isinstance(args, list):
        args = tuple(args)
    if not isinstance(args, tuple):
        raise TypeError(f"args must be a tensor or a tuple, not {type(args).__name__}")
    if args and isinstance(args[-1], dict):
        return args[:-1], dict(args[-1])
    return args, {}


def input_names_for(model, pos_args, kw_args, given=None):
    """Names for the flattened input tensors: given names first (in order, as
    torch.onnx.export applies input_names), then the forward signature's
    parameter names (<param>_<i> for a parameter holding several tensors)."""
    try:
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    derived = []
    for i, arg in enumerate(pos_args):
        base = params[i].name if i < len(params) else f"input_{i}"
        derived += _names(base, arg)
    for key, arg in kw_args.items():
        derived += _names(key, arg)
    given = list(given or [])
    names = given[:len(derived)] + derived[len(given):]
    return _unique(names)


def _names(base, arg):
    n = len(flatten(arg))
    if isinstance(arg, torch.Tensor) or n == 1:
        return [base] * n
    return [f"{base}_{k}" for k in range(n)]


def _unique(names):
    seen, out = {}, []
    for n in names:
        if n in seen:
            seen[n] += 1
            n = f"{n}_{seen[n]}"
        else:
            seen[n] = 0
        out.append(n)
    return out
