"""parity.torch: the PyTorch side of parity (dumps and exports).

The same package as ``parity_torch`` (``python -m parity_torch`` still works):
``dump(model, args, out_dir, ...)`` writes the PyTorch dump directory that
:func:`parity.check` and :func:`parity.locate` compare against;
``export(model, args, path, dump_dir=None, exporter="dynamo"|"torchscript", ...)``
exports with either of torch's ONNX exporters and records how. See
python/README.md.
"""
from parity_torch import *  # noqa: F401,F403
from parity_torch import __all__ as _all

__all__ = list(_all)
