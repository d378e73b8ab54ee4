"""The built parity binary the command-line tests run: PARITY_BINARY, else
build/parity of this checkout; `needs_parity` skips a test (or, as
`pytestmark`, a file) when there is none."""

import os

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PARITY = os.environ.get("PARITY_BINARY", os.path.join(REPO, "build", "parity"))
needs_parity = pytest.mark.skipif(not os.access(PARITY, os.X_OK), reason=f"no parity binary at {PARITY}")
