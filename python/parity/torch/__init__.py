"""parity.torch: the PyTorch side of parity (dumps and exports).

Writes the PyTorch dump directory that parity reads as a reference
(:func:`parity.check` with ``torch_dump=``, ``parity check --torch DIR``,
``parity locate --reference torch:DIR``); see docs/contract.md, "Files", and
python/README.md. ``python -m parity.torch dump ...`` is its command line.

Importing it needs neither torch (until ``dump``/``export`` is first used) nor
parity's C++ extension ``parity._core``: a source checkout on ``sys.path`` is
enough.
"""

__all__ = ["ExportError", "dump", "export"]

_LAZY = {"dump": ".dumper", "export": ".exporter", "ExportError": ".errors"}


def __getattr__(name):
    # Imported on first use, so that `python -m parity.torch` answers bad usage
    # without importing torch (seconds).
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
