"""The seed script (ORT Python + NumPy), torch.onnx.verification and the mark-all fusion probe.

seed_main and torchverify_main run as child processes (run_peers.py --_seed / --_torchverify) and
write their result as JSON to $PEERS_RESULT.
"""

import json
import os
import re
import shutil
import time

import numpy as np

from peer_common import ATOL, RTOL
from peer_models import build


# --------------------------------------------------------------------------------------------
# the seed script (ORT Python + NumPy) and torch.onnx.verification, each run as a child process


def seed_check(ref, test, atol=ATOL, rtol=RTOL):  # bench/numpy_seed_check.py's comparison
    ref = ref.astype(np.float64).ravel()
    test = test.astype(np.float64).ravel()
    diff = np.abs(ref - test)
    return {"max_abs": float(diff.max()) if diff.size else 0.0,
            "rmse": float(np.sqrt(np.mean((ref - test) ** 2))) if diff.size else 0.0,
            "allclose": bool(np.allclose(test, ref, rtol=rtol, atol=atol))}


def _mark_all(model_path):
    """Every node output as a graph output, in topological order (the seed's approach)."""
    import onnx
    m = onnx.load(model_path)
    try:
        m = onnx.shape_inference.infer_shapes(m)
    except Exception:  # noqa: BLE001
        pass
    known = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}
    have = {o.name for o in m.graph.output}
    order = []
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have:
                vi = onnx.ValueInfoProto()
                if o in known:
                    vi.CopyFrom(known[o])
                else:
                    vi.name = o
                m.graph.output.append(vi)
                have.add(o)
            if o:
                order.append((o, n.name))
    return m, order


def _session(model, opt, optimized_path=None):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = {"disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                   "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[opt]
    so.log_severity_level = 3
    if optimized_path:
        so.optimized_model_filepath = optimized_path
    data = model if isinstance(model, (str, bytes)) else model.SerializeToString()
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def seed_main(mode, d, arg):
    feed = dict(np.load(os.path.join(d, "inputs.npz")))
    res = {}
    if mode == "check":  # outputs at the deployed config (ORT default: all) vs the dump's outputs
        man = json.load(open(os.path.join(d, "dump", "manifest.json")))
        s = _session(os.path.join(d, arg or "model.onnx"), "all")
        outs = dict(zip([o.name for o in s.get_outputs()], s.run(None, feed)))
        res["outputs"] = {k: seed_check(np.load(os.path.join(d, "dump", f)), outs[k]) for k, f in man["outputs"].items()}
        res["passed"] = all(v["allclose"] for v in res["outputs"].values())
    elif mode == "layerwise":  # every tensor at disable, one .npy each
        m, order = _mark_all(os.path.join(d, "model.onnx"))
        s = _session(m, "disable")
        del m
        names = [o.name for o in s.get_outputs()]
        vals = s.run(None, feed)
        total = 0
        os.makedirs(arg, exist_ok=True)
        for i, (n, v) in enumerate(zip(names, vals)):
            p = os.path.join(arg, "%04d_%s.npy" % (i, re.sub(r"[^A-Za-z0-9._-]", "_", n)))
            np.save(p, v)
            total += os.path.getsize(p)
        res["tensors"] = len(names)
        res["bytes"] = total
    elif mode == "fault":  # every tensor of the faulty model vs the healthy ONNX model, first failing
        mh, order = _mark_all(os.path.join(d, "model.onnx"))
        mf, _ = _mark_all(arg)
        sh, sf = _session(mh, "disable"), _session(mf, "disable")
        del mh, mf
        hv = dict(zip([o.name for o in sh.get_outputs()], sh.run(None, feed)))
        del sh
        fv = dict(zip([o.name for o in sf.get_outputs()], sf.run(None, feed)))
        first = None
        nfail = 0
        for t, node in order:
            if t in hv and t in fv and hv[t].dtype.kind == "f":
                if not seed_check(hv[t], fv[t])["allclose"]:
                    nfail += 1
                    if first is None:
                        first = {"tensor": t, "node": node}
        res["first"] = first
        res["failing_tensors"] = nfail
        res["passed"] = first is None
    json.dump(res, open(os.path.join(os.environ["PEERS_RESULT"]), "w"))


def fusion_probe(d):
    """Does marking every tensor change ORT's fused plan at `all`? Optimized node counts and
    final outputs, plain vs mark-all (what Polygraphy and the seed script observe)."""
    import onnx
    feed = dict(np.load(os.path.join(d, "inputs.npz")))
    tmp = os.path.join(d, "probe")
    os.makedirs(tmp, exist_ok=True)
    plain_p, marked_p = os.path.join(tmp, "plain_opt.onnx"), os.path.join(tmp, "marked_opt.onnx")
    s = _session(os.path.join(d, "model.onnx"), "all", plain_p)
    names = [o.name for o in s.get_outputs()]
    plain = s.run(None, feed)
    del s
    m, _ = _mark_all(os.path.join(d, "model.onnx"))
    s = _session(m, "all", marked_p)
    marked = s.run(names, feed)
    del s
    def ops(p):
        g = onnx.load(p, load_external_data=False).graph
        c = {}
        for n in g.node:
            c[n.op_type] = c.get(n.op_type, 0) + 1
        return len(g.node), c
    n_plain, c_plain = ops(plain_p)
    n_marked, c_marked = ops(marked_p)
    diff = {n: float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
            for n, a, b in zip(names, plain, marked)}
    changed = {k: [c_plain.get(k, 0), c_marked.get(k, 0)] for k in sorted(set(c_plain) | set(c_marked))
               if c_plain.get(k, 0) != c_marked.get(k, 0)}
    res = {"nodes_plain": n_plain, "nodes_marked": n_marked,
           "outputs_bitwise_equal": all(np.array_equal(a, b) for a, b in zip(plain, marked)),
           "max_abs_output_change": max(diff.values()),
           "op_counts_changed": changed,
           }
    shutil.rmtree(tmp, ignore_errors=True)
    return res


def torchverify_main(name, d, faulty):
    """torch.onnx.verification.verify_onnx_program: re-export (it needs the ONNXProgram), then verify."""
    import torch
    from torch.onnx.verification import verify_onnx_program
    model, args, kw = build(name)
    t0 = time.perf_counter()
    kwx = dict(input_names=kw["input_names"], output_names=kw["output_names"])
    if "dynamic_axes" in kw:
        kwx["dynamic_axes"] = kw["dynamic_axes"]
    with torch.no_grad():
        prog = torch.onnx.export(model, args, dynamo=True, verbose=False, **kwx)
    export_s = time.perf_counter() - t0
    res = {"export_s": round(export_s, 2)}
    if faulty:
        import onnx_ir
        prog = type(prog)(onnx_ir.load(faulty), prog.exported_program)
    t1 = time.perf_counter()
    infos = verify_onnx_program(prog, args=args, compare_intermediates=bool(faulty))
    res["verify_s"] = round(time.perf_counter() - t1, 2)
    man = json.load(open(os.path.join(d, "dump", "manifest.json")))
    scale = {k: float(np.max(np.abs(np.load(os.path.join(d, "dump", f))))) for k, f in man["outputs"].items()}
    rows = []
    for info in infos:
        band = ATOL + RTOL * scale.get(info.name, 1.0)
        rows.append({"name": info.name, "max_abs": float(info.max_abs_diff), "max_rel": float(info.max_rel_diff),
                     "ok": bool(float(info.max_abs_diff) <= band)})
    res["values"] = len(rows)
    outs = [r for r in rows if r["name"] in man["outputs"]]
    res["outputs"] = outs
    res["passed"] = all(r["ok"] for r in outs) if outs else all(r["ok"] for r in rows)
    bad = [r for r in rows if not r["ok"]]
    res["first"] = bad[0]["name"] if bad else None
    res["failing_values"] = len(bad)
    json.dump(res, open(os.environ["PEERS_RESULT"], "w"))
