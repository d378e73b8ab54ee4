"""parity: does the exported ONNX model compute what the PyTorch model computes?

The C++ engine bound for Python. Functions mirror the command line:

- :func:`compare` -- two arrays or dicts of arrays, in place (no copy), with
  the CLI's tolerance policy; returns a :class:`Comparison`.
- :func:`run` -- runs a model under one ORT config; numpy arrays out.
- :func:`check` -- the whole validation (``parity check``); a :class:`Report`.
- :func:`locate` -- where the target config departs from the reference
  (``parity locate``); a :class:`Report`.

``parity.torch`` is the PyTorch side (dumps and exports, also
``python -m parity_torch``); ``parity.testing.assert_export_matches`` is the
pytest helper. Bad input raises :class:`ParityError` (a ``ValueError``) with
the CLI's one-line message; a runtime failure raises
:class:`ParityRuntimeError`. See docs/python.md.
"""
from ._core import ParityError, __version__
from .compare import Comparison, TensorResult, compare
from .engine import ParityRuntimeError, check, locate, run
from .report import Report

__all__ = [
    "__version__", "ParityError", "ParityRuntimeError", "Comparison", "TensorResult", "Report",
    "compare", "run", "check", "locate", "binary",
]


def binary() -> str:
    """The path of the bundled ``parity`` executable (the same CLI)."""
    from ._cli import binary_path
    return binary_path()


def __getattr__(name):
    # parity.torch and parity.testing import torch: only on first use.
    if name in ("torch", "testing"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'parity' has no attribute {name!r}")
