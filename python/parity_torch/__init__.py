"""parity_torch: the PyTorch side of parity.

Writes the PyTorch dump directory that parity's C++ tool reads as a reference
(`parity locate --reference torch:DIR`, `parity check --torch DIR`); see
docs/contract.md, "Files", and python/README.md.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "ExportError", "dump", "export"]

_LAZY = {"dump": ".dumper", "export": ".exporter", "ExportError": ".errors"}


def __getattr__(name):
    # Imported on first use, so that `python -m parity_torch` answers bad usage
    # without importing torch (seconds).
    if name in _LAZY:
        import importlib
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
