"""parity: does the exported ONNX model compute what the PyTorch model computes?

The C++ engine bound for Python. Functions mirror the command line:

- :func:`compare` -- two arrays or dicts of arrays, in place (no copy), with
  the CLI's tolerance policy; returns a :class:`Comparison`.
- :func:`run` -- runs a model under one ORT config; numpy arrays out.
- :func:`check` -- the whole validation (``parity check``); a :class:`Report`.
- :func:`locate` -- where the target config departs from the reference
  (``parity locate``); a :class:`Report`.
- :func:`env` -- ``parity env``'s facts as a dict, among them which ONNX
  Runtime runs (the environment's ``onnxruntime`` wheel's when importable).

``parity.torch`` is the PyTorch side (dumps and exports; ``python -m
parity.torch dump ...``); ``parity.testing.assert_export_matches`` is the
pytest helper. Bad input raises :class:`ParityError` (a ``ValueError``) with
the CLI's one-line message; a runtime failure raises
:class:`ParityRuntimeError`. See docs/python.md.

Every name is imported on first use: ``import parity`` imports neither torch
nor the C++ extension ``parity._core``, so ``parity.torch`` works from a source
checkout that has not built the extension.
"""
import importlib

__all__ = [
    "__version__", "ParityError", "ParityRuntimeError", "Comparison", "TensorResult", "Report",
    "compare", "run", "check", "locate", "env", "binary",
]

# name -> the submodule that defines it (each needs parity._core but report)
_LAZY = {
    "ParityError": "._native", "Comparison": ".compare", "TensorResult": ".compare", "compare": ".compare",
    "ParityRuntimeError": ".engine", "env": ".engine", "check": ".engine", "locate": ".engine", "run": ".engine",
    "Report": ".report",
}


def binary() -> str:
    """The path of the bundled ``parity`` executable (the same CLI)."""
    from ._cli import binary_path
    return binary_path()


def __getattr__(name):
    if name == "__version__":
        from ._version import version
        value = version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in ("torch", "testing"):  # they import torch: only on first use
        return importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'parity' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__) | {"torch", "testing"})
