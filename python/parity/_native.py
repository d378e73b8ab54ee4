"""The C++ extension ``parity._core``, or one line saying how to build it.

A source checkout has ``python/parity`` on the path (``make build`` writes
``parity-source.pth``) but not the extension, which only ``pip install .`` or
``make python-package`` builds: without this, the first ``parity.compare``
(or ``run``, ``check``, ...) died on ``No module named 'parity._core'``.
"""
import importlib
import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

MISSING = (f"parity's C++ extension parity._core is not built beside {PACKAGE_DIR}: from the checkout run "
           "`make python-package` and use PYTHONPATH=build-pkg, or `pip install .` "
           "(parity.torch works without it)")

try:
    _core = importlib.import_module(f"{__package__}._core")
except ModuleNotFoundError as e:
    if e.name != f"{__package__}._core":
        raise
    raise ImportError(MISSING, name=f"{__package__}._core") from None

ParityError = _core.ParityError
