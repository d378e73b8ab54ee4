"""parity.compare: the CLI's comparison kernel over NumPy arrays, in place."""
import json
import os
from typing import Any, Dict, Iterator, List, Mapping, Optional, Union

import numpy as np

from ._native import _core
from ._kwargs import given

ArrayLike = Union[np.ndarray, Mapping[str, np.ndarray], str, "os.PathLike[str]"]


class TensorResult:
    """One tensor's verdict: ``status`` ("pass"/"fail"/"unchecked"), ``reason``,
    ``metrics`` (dict: max_abs, max_abs_index, max_rel, mean_abs, rmse, cosine,
    snr_db, mismatches, nan_ref, ..., count) and ``tolerance`` (dict: atol,
    rtol, mode, why). Metrics are also attributes: ``r.max_abs``."""

    def __init__(self, data: Dict[str, Any]):
        self.data = data
        self.name: str = data["name"]
        self.status: str = data["status"]
        self.reason: str = data.get("reason", "")
        self.metrics: Dict[str, Any] = data.get("metrics", {})
        self.tolerance: Dict[str, Any] = data.get("tolerance", {})

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def __getattr__(self, name: str) -> Any:
        metrics = self.__dict__.get("metrics", {})
        if name in metrics:
            return _number(metrics[name])
        raise AttributeError(name)

    def __repr__(self) -> str:
        m = self.metrics
        return (f"<TensorResult {self.name!r} {self.status} max_abs={m.get('max_abs')} "
                f"mismatches={m.get('mismatches')}/{m.get('count')}>")


def _number(v: Any) -> Any:
    # The JSON writes non-finite numbers as strings ("inf", "-inf", "nan").
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    return v


class Comparison:
    """The result of :func:`compare`: ``passed``, ``tensors`` (list of
    :class:`TensorResult` in reference order), ``findings`` (structural: missing,
    extra, shape, dtype), ``metrics`` (the only tensor's metrics when one pair
    was compared), ``to_json()`` (the CLI's parity.compare/1 fields)."""

    def __init__(self, data: Dict[str, Any]):
        self.data = data
        self.passed: bool = bool(data["passed"])
        self.findings: List[Dict[str, Any]] = data.get("findings", [])
        self.tensors: List[TensorResult] = [TensorResult(t) for t in data.get("tensors", [])]

    @property
    def metrics(self) -> Dict[str, Any]:
        """The metrics of the single compared tensor (ValueError if several)."""
        if len(self.tensors) != 1:
            raise ValueError(f"{len(self.tensors)} tensors were compared: use comparison[name].metrics")
        return self.tensors[0].metrics

    @property
    def failed(self) -> List[str]:
        return [t.name for t in self.tensors if t.status == "fail"]

    def __getitem__(self, name: str) -> TensorResult:
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def __iter__(self) -> Iterator[TensorResult]:
        return iter(self.tensors)

    def __bool__(self) -> bool:
        return self.passed

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.data, indent=indent)

    def __repr__(self) -> str:
        return (f"<Comparison {'PASS' if self.passed else 'FAIL'}: {len(self.tensors)} tensor(s), "
                f"{len(self.failed)} failed, {len(self.findings)} finding(s)>")


def _as_dict(x: ArrayLike, single_name: str) -> Dict[str, np.ndarray]:
    if isinstance(x, (str, os.PathLike)):
        path = os.fspath(x)
        if path.endswith(".npy"):
            return {os.path.basename(path)[:-4]: np.load(path, allow_pickle=False)}
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    if isinstance(x, Mapping):
        return {str(k): _contiguous(v) for k, v in x.items()}
    return {single_name: _contiguous(x)}


def _contiguous(a: Any) -> np.ndarray:
    # No copy for a C-contiguous array (the kernel reads its buffer in place);
    # a strided view or a torch tensor is made contiguous first.
    if hasattr(a, "detach") and hasattr(a, "numpy"):
        a = a.detach().cpu().numpy()
    return np.ascontiguousarray(a)


def compare(reference: ArrayLike, test: ArrayLike, tolerance: Union[None, float, Mapping[str, Any]] = None, *,
            atol: Optional[float] = None, rtol: Optional[float] = None, mode: Optional[str] = None,
            noise: Optional[ArrayLike] = None, rename: Optional[Mapping[str, str]] = None,
            allow_extra: bool = False, threads: int = 0) -> Comparison:
    """Compares ``test`` with ``reference`` like ``parity compare REF TEST``.

    reference, test: an array each (compared whatever their names), dicts of
    arrays matched by name, or ``.npz``/``.npy`` paths. C-contiguous arrays are
    read in place (no copy); the GIL is released while the kernel runs.
    tolerance: None (the default policy: scaled to each output's rms), a float
    (a fixed atol), or a policy dict in the JSON form of docs/compare.md
    (``{"atol": 1e-4, "rtol": 0, "mode": "fixed", "outputs": [...]}``).
    atol, rtol, mode: as ``--atol``, ``--rtol``, ``--mode`` (override tolerance).
    noise: a second reference (fp64 run) for the calibrated mode (``--noise``).
    rename: ``{ref_name: test_name}`` (``--map``). threads: 0 chooses.

    Returns a :class:`Comparison` with the same numbers as the CLI's JSON.
    Raises :class:`parity.ParityError` with the CLI's one-line message for a
    bad policy or an unsupported dtype.

    >>> import numpy as np, parity
    >>> r = parity.compare(np.ones(4, np.float32), np.ones(4, np.float32))
    >>> r.passed, r.metrics["max_abs"]
    (True, 0.0)
    """
    single = not isinstance(reference, (Mapping, str, os.PathLike)) and \
        not isinstance(test, (Mapping, str, os.PathLike))
    ref = _as_dict(reference, "output")
    tst = _as_dict(test, "output")
    ren = dict(rename or {})
    # Two lone arrays or .npy files are one tensor each: compared whatever their names (as the CLI).
    if (single or _is_npy(reference) and _is_npy(test)) and not ren and len(ref) == 1 and len(tst) == 1:
        (rn,), (tn,) = ref.keys(), tst.keys()
        if rn != tn:
            ren[rn] = tn
    policy: Dict[str, Any] = {}
    if isinstance(tolerance, Mapping):
        policy.update(tolerance)
    elif tolerance is not None:
        policy["atol"] = float(tolerance)
    policy.update(given(float, atol=atol, rtol=rtol))
    noise_set: Dict[str, np.ndarray] = {}
    if noise is not None:
        noise_set = _as_dict(noise, next(iter(ref)) if ref else "output")
        if mode is None and "mode" not in policy:
            mode = "calibrated"
    elif (mode or policy.get("mode")) == "calibrated":
        raise _core.ParityError("--mode calibrated needs --noise: a second reference that should agree with REF")
    if mode is not None:
        policy["mode"] = mode
    text = _core.compare_sets(ref, tst, json.dumps(policy), ren, noise_set, allow_extra, int(threads), list(ref))
    data = json.loads(text)
    data["schema"] = "parity.compare/1"
    return Comparison(data)


def _is_npy(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike)) and os.fspath(x).endswith(".npy")
