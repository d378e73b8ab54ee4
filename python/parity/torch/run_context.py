"""How the dumper runs a model: eval mode, deterministic algorithms, a fixed
seed, no grad, and torch's fused transformer fast path off (so that every
submodule runs as the ONNX exporters trace it); all restored afterwards."""

import contextlib
import sys

import torch

# Modules whose eval-mode "fast path" (one fused kernel in torch >= 1.12)
# bypasses their submodules and is not what the ONNX exporters trace.
FASTPATH_TYPES = tuple(
    getattr(torch.nn, n) for n in
    ("TransformerEncoderLayer", "TransformerDecoderLayer", "MultiheadAttention")
    if hasattr(torch.nn, n))


@contextlib.contextmanager
def fastpath_disabled(model, slow=None):
    """Switches torch's fused transformer fast path off while inside, when the
    model has a module that takes it (or slow is True), so that submodules run
    as the exporters trace them. Yields False when it was switched off (or no
    module takes it), True when it stays on. torch < 2.1 has no switch: there
    its fast path is skipped when grad is enabled, so grad is enabled instead;
    the caller sees that in grad_enabled()."""
    if slow is None:
        slow = any(isinstance(m, FASTPATH_TYPES) for m in model.modules())
    mha = getattr(getattr(torch.backends, "mha", None), "set_fastpath_enabled", None)
    if not slow:
        yield True
    elif mha is not None:
        before = torch.backends.mha.get_fastpath_enabled()
        mha(False)
        try:
            yield False
        finally:
            mha(before)
    else:
        with torch.enable_grad():
            yield False


@contextlib.contextmanager
def eval_mode(model):
    """model.eval() while inside; every module's training flag restored after."""
    modes = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        yield model
    finally:
        for m, training in modes:
            m.training = training


@contextlib.contextmanager
def run_context(model, seed, slow):
    """eval mode, deterministic algorithms, a fixed seed, no grad (unless the
    fast path can only be avoided with grad); all restored after."""
    det = torch.are_deterministic_algorithms_enabled()
    warn_only = (torch.is_deterministic_algorithms_warn_only_enabled()
                 if hasattr(torch, "is_deterministic_algorithms_warn_only_enabled") else False)
    try:
        with eval_mode(model), torch.random.fork_rng(devices=[]), torch.no_grad():
            _set_deterministic(True, True)
            with fastpath_disabled(model, slow) as fast:
                torch.manual_seed(seed)
                yield {"deterministic": True, "fastpath": fast,
                       "grad_enabled": torch.is_grad_enabled()}
    finally:
        _set_deterministic(det, warn_only)


def _set_deterministic(on, warn_only):
    """torch.use_deterministic_algorithms, less its import of torch._inductor.config
    (torch >= 2.6), which loads torch._dynamo to copy the flag into inductor's config:
    1.4 s of CPU per dump process (measured: docs/bench.md, "make test time"). While
    inductor is not loaded nothing compiled with it, so the flag is set alone; once it
    is, torch's own function keeps its config in step."""
    if "torch._inductor.config" not in sys.modules and hasattr(torch._C, "_set_deterministic_algorithms"):
        torch._C._set_deterministic_algorithms(on, warn_only=warn_only)
        return
    try:
        torch.use_deterministic_algorithms(on, warn_only=warn_only)
    except TypeError:  # torch < 1.11: no warn_only
        torch.use_deterministic_algorithms(on)
