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


def module_reference_args(module: Any, dataset: Any, input_names: List[str], output_names: List[str],
                          tmp: str, batch_size: int = 32) -> List[str]:
    """A ``torch.nn.Module`` as the reference of a dataset (docs/dataset.md).

    The samples (an iterable of dicts or a Ray Dataset) are read in batches of
    ``batch_size``; each batch is run through ``module`` here, in this process
    (eval mode, no grad: parity.torch's run context), its inputs passed by
    position in the ONNX model's input order (``input_names``), stacked along
    axis 0 when every sample has the same shapes (else one call per sample),
    its flattened outputs filed under ``output_names`` by position. Each
    sample's inputs go to dataset/sampleNNNNNN.npz and its reference outputs
    to reference/sampleNNNNNN.npz; only one batch is in memory. The command
    line then judges the export against them (``--reference-outputs``).
    """
    if isinstance(dataset, (str, os.PathLike)):
        raise ValueError("dataset: with a torch.nn.Module reference give the samples as an iterable of dicts "
                         "or a ray.data.Dataset (the module runs on them here)")
    rows = dataset.iter_rows() if _is_ray_dataset(dataset) else dataset
    if isinstance(rows, dict):
        raise ValueError("dataset: a dict is one sample; give an iterable of dicts (or a path)")
    folder, ref = os.path.join(tmp, "dataset"), os.path.join(tmp, "reference")
    os.makedirs(folder)
    os.makedirs(ref)
    batch, n = [], 0
    for n, sample in enumerate(rows, start=1):
        if not isinstance(sample, dict):
            raise ValueError(f"dataset: sample {n - 1} is a {type(sample).__name__}, not a dict of arrays")
        batch.append({k: _array(v) for k, v in sample.items()})
        if len(batch) == batch_size:
            _run_batch(module, batch, n - len(batch), input_names, output_names, folder, ref)
            batch = []
    if batch:
        _run_batch(module, batch, n - len(batch), input_names, output_names, folder, ref)
    if n == 0:
        raise ValueError("dataset: no samples")
    return ["--dataset", folder, "--reference-outputs", ref]


def _run_batch(module, batch, first, input_names, output_names, folder, ref):
    from .torch.run_context import run_context
    from .torch.flatten import flatten
    import torch
    for i, sample in enumerate(batch):
        missing = [k for k in input_names if k not in sample]
        if missing:
            raise ValueError(f"dataset: sample {first + i} has no input {missing[0]!r} (the model's: {input_names})")
    same = all(s[k].ndim >= 1 and s[k].shape[1:] == batch[0][k].shape[1:] for s in batch for k in input_names)
    groups = [batch] if same else [[s] for s in batch]
    outputs = []
    with run_context(module, 0, False):
        for group in groups:
            args = [torch.from_numpy(np.concatenate([s[k] for s in group])) for k in input_names]
            flat = [t.detach().cpu().numpy() for t in flatten(module(*args))]
            if len(flat) != len(output_names):
                raise ValueError(f"the module returned {len(flat)} tensors; the model has {len(output_names)} outputs")
            sizes = np.cumsum([s[input_names[0]].shape[0] for s in group])[:-1] if input_names else []
            if len(group) > 1 and any(t.ndim == 0 or t.shape[0] != sizes[-1] + group[-1][input_names[0]].shape[0]
                                      for t in flat):
                raise ValueError("the module's outputs do not keep the batch axis; give batch_size=1")
            parts = [np.split(t, sizes) for t in flat] if len(group) > 1 else [[t] for t in flat]
            outputs += [{name: parts[o][j] for o, name in enumerate(output_names)} for j in range(len(group))]
    for i, (sample, out) in enumerate(zip(batch, outputs)):
        np.savez(os.path.join(folder, f"sample{first + i:06d}.npz"), **sample)
        np.savez(os.path.join(ref, f"sample{first + i:06d}.npz"), **out)
