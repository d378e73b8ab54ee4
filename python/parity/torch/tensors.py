"""Tensor -> .npy conversion, atomic file writes, a dump's tensor files, and summary statistics."""

import json
import os
import re

import numpy as np
import torch

_SAFE = re.compile(r"[^A-Za-z0-9._-]")

# Tensor dtypes numpy has no type for: written as raw bits of the same width
# (numpy void, as ml_dtypes' bfloat16 appears in a plain .npy header: '|V2'),
# and named in the manifest by their torch name.
_RAW_BITS = {"bfloat16": (torch.int16, "V2")}
for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
    if hasattr(torch, _name):
        _RAW_BITS[_name] = (torch.int8, "V1")


def sanitize(name):
    """Maps a module path or tensor name to the file-name alphabet [A-Za-z0-9._-]."""
    return _SAFE.sub("_", name) or "_"


def dtype_name(tensor):
    """The manifest's dtype string: numpy's name, or torch's for raw-bit types."""
    return str(tensor.dtype).replace("torch.", "")


def to_numpy(tensor):
    """Returns (array to save, dtype name) for a tensor; a detached CPU copy.

    bfloat16 (and float8 where torch has it) are saved as raw bits ('|V2').
    """
    t = tensor.detach()
    if t.is_sparse:
        t = t.to_dense()
    t = t.cpu().contiguous()
    name = dtype_name(t)
    if name in _RAW_BITS:
        int_type, void = _RAW_BITS[name]
        return t.view(int_type).numpy().copy().view(void), name
    try:
        return t.numpy().copy(), name
    except TypeError:
        # Unsigned types numpy knows but this torch cannot hand over
        # (uint16/32/64 on some versions): go through a wider signed type.
        if name.startswith("uint"):
            return t.to(torch.int64).numpy().astype(name), name
        raise


def stats(tensor):
    """min/max/mean over finite elements, and NaN/Inf counts; JSON-safe."""
    t = tensor.detach().cpu()
    out = {"min": None, "max": None, "mean": None}
    if t.numel() == 0 or t.is_complex():
        return out
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    t = t.to(torch.float64)
    finite = torch.isfinite(t)
    nan = int(torch.isnan(t).sum())
    inf = int(t.numel() - finite.sum()) - nan
    vals = t[finite]
    if vals.numel():
        out = {"min": vals.min().item(), "max": vals.max().item(),
               "mean": vals.mean().item()}
    if nan or inf:
        out.update(nan_count=nan, inf_count=inf)
    return out


def _tmp_name(path):
    return f"{path}.tmp-{os.getpid()}"


def save_npy(path, array):
    """Writes array to path atomically (temporary name, then os.replace)."""
    tmp = _tmp_name(path)
    try:
        with open(tmp, "wb") as f:
            np.save(f, array, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def save_json(path, obj):
    """Writes obj as JSON to path atomically; NaN/Inf are refused (invalid JSON)."""
    tmp = _tmp_name(path)
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, allow_nan=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def write_tensor(out_dir, fname, tensor, written):
    """Saves one tensor as out_dir/fname and adds fname (with '/') to the set
    `written`; returns its manifest entry {file, dtype, shape, stats...}."""
    array, dtype = to_numpy(tensor)
    rel = fname.replace(os.sep, "/")
    save_npy(os.path.join(out_dir, fname), array)
    written.add(rel)
    return {"file": rel, "dtype": dtype, "shape": list(tensor.shape), **stats(tensor)}
