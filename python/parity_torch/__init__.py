"""parity_torch: the PyTorch side of parity.

Writes the PyTorch dump directory that parity's C++ tool reads as a reference
(`parity locate --reference torch:DIR`, `parity check --torch DIR`); see
SPEC.md, "Files", and python/README.md.
"""

__version__ = "0.1.0"

from .dumper import dump  # noqa: E402
from .errors import ExportError  # noqa: E402
from .exporter import export  # noqa: E402

__all__ = ["__version__", "ExportError", "dump", "export"]
