"""Keyword arguments that were given: the one way parity's Python API drops the None defaults."""
from typing import Any, Callable, Dict, Optional


def given(convert: Optional[Callable[[Any], Any]] = None, **values: Any) -> Dict[str, Any]:
    """The entries of ``values`` that are not None, each passed through ``convert`` when one is given.

    >>> given(float, atol=1, rtol=None)
    {'atol': 1.0}
    """
    return {k: convert(v) if convert else v for k, v in values.items() if v is not None}
