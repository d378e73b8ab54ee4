"""What each tool's output says: verdicts, and which node or module it named for a planted fault."""

import json

from peer_runner import polygraphy_failed

def _res_verdict(row):
    r = row.get("result")
    if not r:
        return f"ERROR rc={row['rc']}"
    return "PASS" if r.get("passed") else "FAIL"


def _parity_verdict(pj, rc):
    try:
        r = json.load(open(pj))
        return r.get("overall_status", "?")
    except (OSError, ValueError):
        return f"ERROR rc={rc}"


def _named(f, verdict, first, how):
    """Which node/module a tool named for a planted fault, and whether it is the right one."""
    out = {"verdict": verdict, "how": how, "planted": f["node"]}
    if first and first.get("tensor"):
        out["names"] = first
        t, node = first.get("tensor"), first.get("node")
        out["right"] = bool(node == f["node"] or t == f["tensor"]
                            or (first.get("module") and any(first["module"] == s or s.endswith("." + first["module"])
                                                            or first["module"] in s for s in f.get("scopes", []))))
        if not out["right"] and t and f["tensor"] and t.split("_output")[0] == f["tensor"].split("_output")[0]:
            out["right"] = True
    else:
        out["names"] = None
        out["right"] = False
    return out


def _parity_fault(pj, rc, f):
    try:
        r = json.load(open(pj))
    except (OSError, ValueError):
        return {"verdict": f"ERROR rc={rc}", "names": None, "right": False}
    fd = r.get("first_divergence") or {}
    first = {"tensor": fd.get("tensor"), "node": fd.get("node") or fd.get("producer"), "module": fd.get("module")}
    out = _named(f, "PASS" if r.get("passed") else "FAIL", first if fd else None, "vs the PyTorch dump, layer by layer")
    return out


def _poly_fault(log, rc, f, model):
    import onnx
    failed = polygraphy_failed(log)
    if not failed:
        return _named(f, "PASS" if rc == 0 else f"FAIL rc={rc}", None, "every tensor vs the healthy ONNX model")
    m = onnx.load(model, load_external_data=False)
    order = {}
    for n in m.graph.node:
        for o in n.output:
            order[o] = (len(order), n.name)
    failed.sort(key=lambda t: order.get(t, (1 << 30, ""))[0])
    t = failed[0]
    out = _named(f, "FAIL", {"tensor": t, "node": order.get(t, (0, None))[1]}, "every tensor vs the healthy ONNX model")
    out["failing_tensors"] = len(failed)
    return out


def _parity_fusion(pj, rc):
    try:
        r = json.load(open(pj))
    except (OSError, ValueError):
        return {"verdict": f"ERROR rc={rc}"}
    s = r.get("summary", {})
    fd = r.get("first_divergence")
    return {"verdict": "PASS" if rc == 0 else "FAIL", "observer_check": r.get("observer_check"),
            "observer_mode": r.get("observer_mode"), "fused_nodes": s.get("fused_nodes"),
            "optimized_nodes": s.get("optimized_nodes"), "original_nodes": s.get("original_nodes"),
            "observed": s.get("pass", 0) + s.get("fail", 0), "unchecked": s.get("unchecked"),
            "names": {"tensor": fd.get("tensor"), "fused_node": fd.get("fused_node")} if fd else None,
            "culprits": [c.get("fused_node") for c in r.get("culprits", [])][:3]}
