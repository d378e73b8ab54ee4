"""``parity.check(..., dataset=...)``: what a dataset may be, as the CLI's
``--dataset`` (docs/dataset.md).

A path (a folder or glob of .npz/.npy files, a folder of per-sample folders)
goes to the CLI as it is. An iterable of ``{input name: array}`` dicts, or a
``ray.data.Dataset`` (its rows, one sample each), is written one sample at a
time into a temporary folder of .npz files (one per sample, never all in
memory) which the CLI then streams; its ids are ``sample000000``, ....
"""
import os
from typing import Any, List

import numpy as np


def _is_ray_dataset(obj: Any) -> bool:
    return type(obj).__module__.startswith("ray.data") and hasattr(obj, "iter_rows")


def _array(v: Any) -> np.ndarray:
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        v = v.detach().cpu().numpy()
    return np.asarray(v)


def dataset_args(dataset: Any, tmp: str) -> List[str]:
    """The CLI arguments for ``dataset``; writes an in-memory one under ``tmp``."""
    if isinstance(dataset, (str, os.PathLike)):
        return ["--dataset", os.fspath(dataset)]
    rows = dataset.iter_rows() if _is_ray_dataset(dataset) else dataset
    if isinstance(rows, dict):
        raise ValueError("dataset: a dict is one sample; give an iterable of dicts (or a path)")
    folder = os.path.join(tmp, "dataset")
    os.makedirs(folder)
    n = 0
    for n, sample in enumerate(rows, start=1):
        if not isinstance(sample, dict):
            raise ValueError(f"dataset: sample {n - 1} is a {type(sample).__name__}, not a dict of arrays")
        np.savez(os.path.join(folder, f"sample{n - 1:06d}.npz"), **{k: _array(v) for k, v in sample.items()})
    if n == 0:
        raise ValueError("dataset: no samples")
    return ["--dataset", folder]


def engine_args(engine: str, ray_address: Any, ray_actors: int) -> List[str]:
    if engine not in ("local", "ray"):
        raise ValueError(f"engine: 'local' or 'ray', not {engine!r}")
    args = ["--engine", engine]
    if engine == "ray":
        args += ["--ray-actors", str(int(ray_actors))]
        if ray_address:
            args += ["--ray-address", str(ray_address)]
    return args
