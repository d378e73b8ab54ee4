"""Float64 NumPy computation of parity's per-tensor metrics, by definition.

Usage: reference_metrics.py MANIFEST.json OUT.json
MANIFEST: [{"name", "ref", "test" (raw files), "ref_dtype", "test_dtype", "shape", "atol", "rtol"}].
OUT: one object per case; floats as repr() strings ("inf", "nan" included).
Definitions follow src/compare/metrics.h. Run with the .venv's python (make creates it).
"""
import json
import struct
import sys

import numpy as np

DECADES = [1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2]


def cut(x):
    """The bin cut above decade x: its float64 with the low 32 bits set (metrics.h)."""
    (bits,) = struct.unpack("<Q", struct.pack("<d", x))
    (c,) = struct.unpack("<d", struct.pack("<Q", bits | 0xFFFFFFFF))
    return c


EDGES = [0.0] + [cut(x) for x in DECADES]


def load(path, dtype):
    if dtype == "bfloat16":
        bits = np.fromfile(path, dtype=np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    if dtype == "bool":
        return (np.fromfile(path, dtype=np.uint8) != 0).astype(np.float64)
    return np.fromfile(path, dtype=np.dtype(dtype)).astype(np.float64)


def metrics(r, t, atol, rtol):
    fin = np.isfinite(r) & np.isfinite(t)
    rf, tf = r[fin], t[fin]
    d = tf - rf
    a = np.abs(d)
    out = {"count": int(r.size), "finite_pairs": int(fin.sum())}
    if a.size:
        k = int(np.argmax(a))
        out["max_abs"] = a[k]
        out["max_abs_flat_index"] = int(np.flatnonzero(fin)[k])
        out["mean_abs"] = a.mean()
        out["rmse"] = np.sqrt(np.mean(d * d))
    else:
        out.update(max_abs=0.0, max_abs_flat_index=-1, mean_abs=0.0, rmse=0.0)
    nz = rf != 0
    out["max_rel"] = (a[nz] / np.abs(rf[nz])).max() if nz.any() else 0.0
    out["rel_undefined"] = int(((rf == 0) & (a > 0)).sum())
    srr, stt, srt, sdd = (rf * rf).sum(), (tf * tf).sum(), (rf * tf).sum(), (d * d).sum()
    rn, tn, ri, ti = np.isnan(r), np.isnan(t), np.isinf(r), np.isinf(t)
    nonfinite_differ = (rn ^ tn).any() or ((ri | ti) & ~rn & ~tn & (r != t)).any()
    if fin.sum() == 0 and nonfinite_differ:
        out["cosine"] = float("nan")
    elif srr == 0 and stt == 0:
        out["cosine"] = 1.0
    elif srr == 0 or stt == 0:
        out["cosine"] = 0.0
    else:
        out["cosine"] = srt / np.sqrt(srr * stt)
    with np.errstate(divide="ignore"):
        if np.isnan(out["cosine"]):
            out["snr_db"] = float("nan")
        else:
            out["snr_db"] = float("inf") if sdd == 0 else 10 * np.log10(srr / sdd)
    out["mismatches"] = int((~np.isclose(t, r, rtol=rtol, atol=atol, equal_nan=True)).sum())
    out.update(nan_ref=int(rn.sum()), nan_test=int(tn.sum()), inf_ref=int(ri.sum()), inf_test=int(ti.sum()))
    out["nan_mismatch"] = int((rn ^ tn).sum())
    out["nan_equal"] = int((rn & tn).sum())
    out["inf_equal"] = int((ri & ti & (r == t)).sum())
    out["inf_mismatch"] = int(((ri | ti) & ~rn & ~tn & (r != t)).sum())
    rfin = r[np.isfinite(r)]
    out["ref_finite"] = int(rfin.size)
    if rfin.size:
        out.update(ref_min=rfin.min(), ref_max=rfin.max(), ref_mean=rfin.mean(), ref_std=rfin.std())
    else:
        out.update(ref_min=0.0, ref_max=0.0, ref_mean=0.0, ref_std=0.0)
    above = [int((a > e).sum()) for e in EDGES]
    hist = [int(a.size) - above[0]] + [above[k - 1] - above[k] for k in range(1, len(EDGES))] + [above[-1]]
    out["histogram"] = hist
    return {k: (repr(float(v)) if isinstance(v, (float, np.floating)) else v) for k, v in out.items()}


def main():
    cases = json.load(open(sys.argv[1]))
    results = {}
    for c in cases:
        r = load(c["ref"], c["ref_dtype"])
        t = load(c["test"], c["test_dtype"])
        results[c["name"]] = metrics(r, t, c["atol"], c["rtol"])
    json.dump(results, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
