"""Inputs the export dropped: unused, or frozen at their traced value?

The TorchScript exporter leaves out of the ONNX inputs an input the traced
graph never reads: one the model does not use (harmless), or one whose value
the trace turned into a constant (a fault: the file computes with the traced
value whatever it is given). Only PyTorch can tell them apart: each dropped
input is changed twice (floats: noise of their own scale, and zeros; integers:
+1 and zeros; bool: negated) and the model run again; an input none of whose
changes moves any output is recorded as unread (the export record's
`unread_inputs`; `parity check` passes the dropped name then, and fails it
otherwise: docs/inputs.md "Inputs an exporter dropped").
"""

import torch

from .control_flow import eager_cond
from .flatten import flatten


def dropped_inputs(input_names, record):
    """The asked input names the exported file does not have."""
    in_file = record.get("onnx_input_names")
    if in_file is None:
        return []
    return [n for n in input_names if n not in in_file]


def _changes(t, generator):
    if t.dtype == torch.bool:
        return [~t]
    if t.is_floating_point():
        scale = float(t.abs().max()) if t.numel() else 1.0
        noise = torch.randn(t.shape, generator=generator).to(t.dtype) * max(scale, 1.0)
        return [t + noise, torch.zeros_like(t)]
    return [t + 1, torch.zeros_like(t)]


def _outputs(model, args):
    with torch.no_grad(), eager_cond():
        return [o.detach().clone() for o in flatten(model(*args))]


def _same(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and torch.equal(x, y) for x, y in zip(a, b))


def unread_inputs(model, args, input_names, dropped, seed=0):
    """Of `dropped` (names among input_names, one positional tensor each), those
    no change of which moves PyTorch's outputs; [] when args are not one
    tensor per input."""
    if not isinstance(args, tuple) or len(args) != len(input_names):
        return []
    base = _outputs(model, args)
    g = torch.Generator().manual_seed(seed)
    unread = []
    for name in dropped:
        i = input_names.index(name)
        if not isinstance(args[i], torch.Tensor):
            continue
        moved = False
        for changed in _changes(args[i], g):
            try:
                moved = not _same(base, _outputs(model, args[:i] + (changed,) + args[i + 1:]))
            except Exception:  # noqa: BLE001 -- a value the model refuses: it reads the input
                moved = True
            if moved:
                break
        if not moved:
            unread.append(name)
    return unread
