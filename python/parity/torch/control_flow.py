"""The dumper's hooks and torch's higher-order control flow (torch.cond).

torch.cond traces its branches with torch's graph capture even in eager mode
(torch.compile, fullgraph): a forward hook that writes files or counts calls
inside a branch is a side effect the capture refuses ("This higher order
operator doesn't work unless it is captured completely"). So:
  - hooks do nothing while torch is capturing a graph (capturing());
  - while the dumper's hooked run is on, torch.cond runs the branch it takes
    as plain Python (eager_cond()), so that branch's modules are hooked and
    dumped like any other; the branch not taken is not run, as in ONNX's If.
A model that bound cond before the dump (`from torch import cond`) still
runs, its branches' modules unrecorded.
"""

import contextlib
import sys

import torch


def capturing(tensors=()):
    """True while torch traces rather than runs: dynamo capture (a cond
    branch, torch.compile), or fake/functional tensors (torch.export's
    tracing): there is no value to record then."""
    compiler = getattr(torch, "compiler", None)
    if compiler is not None and hasattr(compiler, "is_compiling") and compiler.is_compiling():
        return True
    # Not loaded, it captures nothing; getattr(torch, "_dynamo") would load it (1.4 s of CPU).
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None and hasattr(dynamo, "is_compiling") and dynamo.is_compiling():
        return True
    return any(_traced(t) for t in tensors)


def _traced(tensor):
    try:
        from torch._subclasses.fake_tensor import FakeTensor
        if isinstance(tensor, FakeTensor):
            return True
    except ImportError:
        pass
    is_functional = getattr(torch, "_is_functional_tensor", None)
    return bool(is_functional and is_functional(tensor))


@contextlib.contextmanager
def eager_cond(taken=None):
    """torch.cond replaced, while inside, by the branch it takes, run eagerly
    (same operators, same values; no graph capture). `taken`: a list that
    gets (call site, True for true_fn) per call (branches.py)."""
    original = getattr(torch, "cond", None)
    if original is None:
        yield
        return

    def cond(pred, true_fn, false_fn, operands=(), *args, **kwargs):
        if args or kwargs:  # a signature this torch added: leave it to torch
            return original(pred, true_fn, false_fn, operands, *args, **kwargs)
        then = bool(pred.item() if isinstance(pred, torch.Tensor) else pred)
        if taken is not None:
            taken.append((call_site(true_fn, false_fn), then))
        return (true_fn if then else false_fn)(*operands)

    torch.cond = cond
    try:
        yield
    finally:
        torch.cond = original


def call_site(true_fn, false_fn):
    """'decode.py:136|decode.py:134': where a cond's two branches are
    defined, the same for every call of one torch.cond line."""
    def where(fn):
        code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__func__", None), "__code__", None)
        if code is None:
            return type(fn).__name__
        return f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
    return f"{where(true_fn)}|{where(false_fn)}"
