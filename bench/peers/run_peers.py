"""parity against its peers, on the same models, inputs and machine, in one run (issue 17).

    .venv/bin/python bench/peers/run_peers.py [--models resnet50,mobilenet_v3_small,bert_base,gpt2_small,yolo_like]
        [--jobs check,layerwise,fault,fusion] [--cache build/peers-cache] [--parity build/parity]
        [--md docs/peers.md] [--json docs/peers.json]

Reports numbers; never gates CI. Every tool runs as its own process (wall time and peak RSS from
GNU time, which forks the tool from its own small process), under `nice`, one at a time. Exports and dumps are cached in --cache
(model.onnx, dump/, inputs.npz, Polygraphy's input/output JSON, planted faults).

Tools:
  parity       the C++ binary (check / baseline / locate)
  polygraphy   `polygraphy run --onnxrt` (compare with loaded PyTorch outputs; `--onnx-outputs mark all
               --save-outputs` for every layer)
  torch.verif  torch.onnx.verification.verify_onnx_program (torch 2.14: that function and
               VerificationInfo are all there is; it needs the in-memory ONNXProgram, so its cost
               includes re-exporting the model)
  seed         the seed's approach: ORT's Python API + NumPy, every tensor marked as a graph output
               (the comparison of bench/numpy_seed_check.py)
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

ATOL, RTOL = 1e-4, 1e-3  # the fixed band given to the peers (numpy allclose / polygraphy elemwise)
DEFAULT_MODELS = "resnet50,mobilenet_v3_small,bert_base,gpt2_small,yolo_like"

# --------------------------------------------------------------------------------------------
# models


def _tokens(vocab, seq=32, seed=0):
    import torch
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (1, seq), generator=g)
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[0, -4:] = 0
    return ids, mask


def build(name):
    """(model, args, export kwargs) deterministically, random weights, nothing downloaded."""
    import torch
    from parity_torch import zoo_models
    torch.manual_seed(0)
    if name in ("resnet50", "mobilenet_v3_small"):
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        args = (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0)),)
        kw = dict(input_names=["images"], output_names=["logits"])
    elif name == "bert_base":
        from transformers import BertConfig, BertModel

        class BertForExport(BertModel):
            def forward(self, input_ids, attention_mask):
                return super().forward(input_ids=input_ids, attention_mask=attention_mask)
        cfg = BertConfig()  # bert-base: 12 layers, hidden 768, vocab 30522
        model = BertForExport(cfg, add_pooling_layer=True)
        args = _tokens(cfg.vocab_size)
        kw = dict(input_names=["input_ids", "attention_mask"],
                  output_names=["last_hidden_state", "pooler_output"])
    elif name == "gpt2_small":
        from transformers import GPT2Config, GPT2LMHeadModel

        class GPT2ForExport(GPT2LMHeadModel):
            def forward(self, input_ids, attention_mask):
                return super().forward(input_ids=input_ids, attention_mask=attention_mask)
        cfg = GPT2Config(use_cache=False)  # gpt2 small: 12 layers, n_embd 768, vocab 50257
        model = GPT2ForExport(cfg)
        args = _tokens(cfg.vocab_size)
        kw = dict(input_names=["input_ids", "attention_mask"], output_names=["logits"])
    elif name == "yolo_like":
        from parity_torch import models
        model = models.YoloLike()
        args = tuple(models.YoloLike.make_inputs(0, batch=1, height=256, width=320))
        kw = dict(input_names=["images"], output_names=["p3", "p4", "p5"],
                  dynamic_axes={"images": {0: "batch", 2: "height", 3: "width"}})
    else:
        raise SystemExit(f"unknown model {name}")
    zoo_models._randomize_norm_statistics(model)
    model.eval()
    return model, args, kw


def do_export(name, d):
    """model.onnx + dump/ + inputs.npz + poly_inputs.json + torch_outputs.json in d."""
    import parity_torch
    from parity_torch.zoo import _write_inputs
    from polygraphy.comparator import IterationResult, RunResults
    from polygraphy.json import save_json
    os.makedirs(d, exist_ok=True)
    model, args, kw = build(name)
    t0 = time.perf_counter()
    rec = parity_torch.export(model, args, os.path.join(d, "model.onnx"), dump_dir=os.path.join(d, "dump"),
                              exporter="dynamo", **kw)
    secs = time.perf_counter() - t0
    _write_inputs(d)
    feed = dict(np.load(os.path.join(d, "inputs.npz")))
    save_json([feed], os.path.join(d, "poly_inputs.json"))
    man = json.load(open(os.path.join(d, "dump", "manifest.json")))
    outs = {k: np.load(os.path.join(d, "dump", v)) for k, v in man["outputs"].items()}
    rr = RunResults()
    rr.add([IterationResult(outputs=outs, runner_name="torch")], runner_name="torch")
    rr.save(os.path.join(d, "torch_outputs.json"))
    json.dump({"export_s": round(secs, 1), "opset": rec.get("onnx_opset"),
               "weights_mb": round(_weights_bytes(os.path.join(d, "model.onnx")) / 1e6, 1)},
              open(os.path.join(d, "export.json"), "w"))


def _weights_bytes(path):
    import onnx
    m = onnx.load(path)
    return sum(int(np.prod(t.dims)) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
               for t in m.graph.initializer)


# --------------------------------------------------------------------------------------------
# planted faults (in the exported ONNX: an exporter bug as the user would meet it)


def _scopes(node):
    for p in node.metadata_props:
        if p.key == "pkg.torch.onnx.name_scopes":
            try:
                return json.loads(p.value)
            except ValueError:
                return [p.value]
    return []


def plant_faults(d):
    """faults/<kind>.onnx and faults.json: the planted node, its module scope."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(os.path.join(d, "model.onnx"))
    inits = {t.name: t for t in m.graph.initializer}
    nodes = list(m.graph.node)
    out = {}
    os.makedirs(os.path.join(d, "faults"), exist_ok=True)
    # weight x1.01: the weight of the compute node nearest the middle of the graph
    cands = [i for i, n in enumerate(nodes) if n.op_type in ("Conv", "MatMul", "Gemm")
             and any(x in inits and len(inits[x].dims) >= 2 for x in n.input)]
    if cands:
        i = min(cands, key=lambda k: abs(k - len(nodes) // 2))
        n = nodes[i]
        w = next(x for x in n.input if x in inits and len(inits[x].dims) >= 2)
        users = [u.name for u in nodes if w in u.input]
        f = onnx.load(os.path.join(d, "model.onnx"))
        t = next(t for t in f.graph.initializer if t.name == w)
        t.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(t) * np.float32(1.01)).astype(np.float32), w))
        onnx.save(f, os.path.join(d, "faults", "weight.onnx"))
        out["weight"] = {"node": n.name, "op_type": n.op_type, "initializer": w, "users": users,
                         "scopes": _scopes(n), "tensor": n.output[0], "what": f"{w} x1.01 ({n.op_type})"}
    # Relu -> LeakyRelu(0.01) at the Relu nearest the middle
    cands = [i for i, n in enumerate(nodes) if n.op_type == "Relu"]
    if cands:
        i = min(cands, key=lambda k: abs(k - len(nodes) // 2))
        f = onnx.load(os.path.join(d, "model.onnx"))
        n = f.graph.node[i]
        n.op_type = "LeakyRelu"
        n.attribute.append(onnx.helper.make_attribute("alpha", 0.01))
        onnx.save(f, os.path.join(d, "faults", "leakyrelu.onnx"))
        out["leakyrelu"] = {"node": n.name, "op_type": "Relu", "scopes": _scopes(n), "tensor": n.output[0],
                            "what": f"{n.name}: Relu -> LeakyRelu(0.01)"}
    json.dump(out, open(os.path.join(d, "faults.json"), "w"), indent=1)


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


# --------------------------------------------------------------------------------------------
# running and measuring a child process


def measure(cmd, log, env=None, timeout=1200):
    """(rc, wall_s, peak_rss_bytes) of one child process; stdout+stderr into log; rc 124 on timeout.

    GNU time forks the tool from its own small process, so the peak RSS is the tool's alone (a child
    forked from this Python process would count this process's pages until its exec)."""
    tf = log + ".time"
    full = ["/usr/bin/time", "-f", "%e %M", "-o", tf, "nice", "-n", "5"] + cmd
    t0 = time.perf_counter()
    timed_out = False
    with open(log, "w") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        p = subprocess.Popen(full, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            for c in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split():
                os.kill(int(c), 9)  # the tool under time (nice has exec'd into it)
            p.wait()
    wall = time.perf_counter() - t0
    rss = 0
    try:
        last = open(tf).read().strip().splitlines()[-1].split()
        wall, rss = float(last[-2]), int(last[-1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    rc = 124 if timed_out else p.returncode
    return rc, wall, rss


def dir_bytes(p):
    if os.path.isfile(p):
        return os.path.getsize(p)
    tot = 0
    for root, _, files in os.walk(p):
        for f in files:
            tot += os.path.getsize(os.path.join(root, f))
    return tot


class Runner:
    def __init__(self, a):
        self.a = a
        self.py = sys.executable
        self.poly = os.path.join(os.path.dirname(self.py), "polygraphy")
        self.rows = []
        self.work = os.path.join(a.cache, "_work")

    def run(self, job, model, tool, cmd, result_file=None, out_path=None, extra=None, timeout=1200):
        os.makedirs(self.work, exist_ok=True)
        log = os.path.join(self.work, f"{model}.{job}.{tool}.log")
        env = dict(os.environ)
        if result_file:
            env["PEERS_RESULT"] = result_file
            if os.path.exists(result_file):
                os.remove(result_file)
        rc, wall, rss = measure(cmd, log, env, timeout)
        row = {"job": job, "model": model, "tool": tool, "rc": rc, "wall_s": round(wall, 2),
               "peak_rss_mb": round(rss / 2**20, 1), "cmd": " ".join(shlex.quote(c) for c in cmd), "log": log}
        if out_path:
            row["bytes_written"] = dir_bytes(out_path) if os.path.exists(out_path) else 0
        if result_file and os.path.exists(result_file):
            row["result"] = json.load(open(result_file))
        if rc == 124:
            row["verdict"] = f"TIMEOUT ({timeout} s)"
        elif extra:
            row.update(extra(row, open(log, errors="replace").read()))
        self.rows.append(row)
        print(f"  {job:9s} {model:18s} {tool:11s} rc={rc} {wall:7.1f}s {rss / 2**20:8.0f} MiB"
              + (f" {row.get('verdict', '')} {row.get('names', '') or ''}"), flush=True)
        return row


def polygraphy_failed(log):
    return re.findall(r"FAILED \| Output: '([^']+)'", log)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--jobs", default="check,layerwise,fault,fusion")
    ap.add_argument("--cache", default=os.path.join(REPO, "build", "peers-cache"))
    ap.add_argument("--parity", default=os.path.join(REPO, "build", "parity"))
    ap.add_argument("--md", default=os.path.join(REPO, "docs", "peers.md"))
    ap.add_argument("--json", default=os.path.join(REPO, "docs", "peers.json"))
    ap.add_argument("--verif-fault-max-mb", type=float, default=50,
                    help="run torch.onnx.verification with compare_intermediates (slow) only on models "
                         "with at most this many MB of weights")
    ap.add_argument("--_export", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--_seed", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--_torchverify", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--render-only", action="store_true", help="re-render --md from --json (no runs)")
    a = ap.parse_args()
    if a.render_only:
        doc = json.load(open(a.json))
        by = {}
        for r in doc["rows"]:
            by.setdefault((r["job"], r["model"]), {})[r["tool"]] = r
        md = render_md(doc, by)
        old = open(a.md).read() if os.path.exists(a.md) else ""
        if "<!-- analysis -->" in old:
            md = md.split("<!-- analysis -->")[0] + "<!-- analysis -->" + old.split("<!-- analysis -->", 1)[1]
        open(a.md, "w").write(md)
        return
    if a._export:
        return do_export(*a._export)
    if a._seed:
        return seed_main(*a._seed)
    if a._torchverify:
        return torchverify_main(a._torchverify[0], a._torchverify[1], a._torchverify[2] if a._torchverify[2] != "-" else None)

    a.cache = os.path.abspath(a.cache)
    os.makedirs(a.cache, exist_ok=True)
    started = time.perf_counter()
    models = a.models.split(",")
    jobs = a.jobs.split(",")
    R = Runner(a)
    me = [R.py, os.path.abspath(__file__)]
    info = {}
    for m in models:  # exports (cached)
        d = os.path.join(a.cache, m)
        if not os.path.isfile(os.path.join(d, "export.json")):
            shutil.rmtree(d, ignore_errors=True)
            print(f"export {m} ...", flush=True)
            rc, wall, rss = measure(me + ["--_export", m, d], os.path.join(a.cache, f"{m}.export.log"))
            if rc != 0:
                print(f"  export of {m} failed (rc {rc}): {a.cache}/{m}.export.log", flush=True)
                continue
        if not os.path.isfile(os.path.join(d, "faults.json")):
            plant_faults(d)
        info[m] = json.load(open(os.path.join(d, "export.json")))
        info[m]["onnx_mb"] = round(os.path.getsize(os.path.join(d, "model.onnx")) / 1e6, 1)
        info[m]["faults"] = json.load(open(os.path.join(d, "faults.json")))
    models = [m for m in models if m in info]
    P = a.parity
    W = R.work
    for m in models:
        d = os.path.join(a.cache, m)
        mo, dump, inp = os.path.join(d, "model.onnx"), os.path.join(d, "dump"), os.path.join(d, "inputs.npz")
        pin, pout = os.path.join(d, "poly_inputs.json"), os.path.join(d, "torch_outputs.json")
        print(f"== {m} ({info[m]['weights_mb']} MB of weights)", flush=True)
        if "check" in jobs:
            pj = os.path.join(W, f"{m}.check.parity.json")
            R.run("check", m, "parity", [P, "check", mo, "--torch", dump, "--inputs", inp, "--opt", "all",
                                         "--runs", "1", "--warmup", "0", "--json", pj],
                  extra=lambda row, log, pj=pj: {"verdict": _parity_verdict(pj, row["rc"])})
            R.run("check", m, "polygraphy", [R.poly, "run", mo, "--onnxrt", "--load-inputs", pin,
                                             "--load-outputs", pout, "--atol", str(ATOL), "--rtol", str(RTOL)],
                  extra=lambda row, log: {"verdict": "PASS" if row["rc"] == 0 else "FAIL",
                                          "names": polygraphy_failed(log)})
            rf = os.path.join(W, "r.json")
            R.run("check", m, "torch.verif", me + ["--_torchverify", m, d, "-"], result_file=rf,
                  extra=lambda row, log: {"verdict": _res_verdict(row)})
            R.run("check", m, "seed", me + ["--_seed", "check", d, ""], result_file=rf,
                  extra=lambda row, log: {"verdict": _res_verdict(row)})
        if "layerwise" in jobs:
            out = os.path.join(W, f"{m}.baseline")
            shutil.rmtree(out, ignore_errors=True)
            R.run("layerwise", m, "parity", [P, "baseline", mo, "--inputs", inp, "-o", out, "--no-determinism-check"],
                  out_path=out)
            shutil.rmtree(out, ignore_errors=True)
            out = os.path.join(W, f"{m}.poly_all.json")
            R.run("layerwise", m, "polygraphy", [R.poly, "run", mo, "--onnxrt", "--graph-optimization-level",
                                                 "ORT_DISABLE_ALL", "--onnx-outputs", "mark", "all",
                                                 "--load-inputs", pin, "--save-outputs", out], out_path=out)
            keep_poly = os.path.join(d, "healthy_all.json")  # the healthy model's every tensor, for the fault job
            if os.path.exists(out):
                os.replace(out, keep_poly)
            out = os.path.join(W, f"{m}.seed_all")
            shutil.rmtree(out, ignore_errors=True)
            R.run("layerwise", m, "seed", me + ["--_seed", "layerwise", d, out], result_file=os.path.join(W, "r.json"),
                  out_path=out)
            shutil.rmtree(out, ignore_errors=True)
        if "fault" in jobs:
            for kind, f in info[m]["faults"].items():
                fm = os.path.join(d, "faults", f"{kind}.onnx")
                job = f"fault:{kind}"
                pj = os.path.join(W, f"{m}.{kind}.locate.json")
                R.run(job, m, "parity", [P, "locate", fm, "--reference", "torch:" + dump, "--inputs", inp,
                                         "--json", pj],
                      extra=lambda row, log, pj=pj, f=f: _parity_fault(pj, row["rc"], f))
                R.run(job, m, "polygraphy", [R.poly, "run", fm, "--onnxrt", "--load-inputs", pin,
                                             "--load-outputs", pout, "--atol", str(ATOL), "--rtol", str(RTOL)],
                      extra=lambda row, log, f=f: _named(f, "PASS" if row["rc"] == 0 else "FAIL",
                                                         None, "vs PyTorch: outputs only"))
                hp = os.path.join(d, "healthy_all.json")
                if os.path.exists(hp):
                    R.run(job, m, "polygraphy+onnx", [R.poly, "run", fm, "--onnxrt", "--graph-optimization-level",
                                                      "ORT_DISABLE_ALL", "--onnx-outputs", "mark", "all",
                                                      "--load-inputs", pin, "--load-outputs", hp,
                                                      "--atol", str(ATOL), "--rtol", str(RTOL)],
                          extra=lambda row, log, f=f, mo=mo: _poly_fault(log, row["rc"], f, mo))
                R.run(job, m, "seed+onnx", me + ["--_seed", "fault", d, fm], result_file=os.path.join(W, "r.json"),
                      extra=lambda row, log, f=f: _named(f, _res_verdict(row),
                                                         (row.get("result") or {}).get("first") or None,
                                                         "vs the healthy ONNX model"))
                R.run(job, m, "seed", me + ["--_seed", "check", d, fm], result_file=os.path.join(W, "r.json"),
                      extra=lambda row, log, f=f: _named(f, _res_verdict(row), None, "vs PyTorch: outputs only"))
                if info[m]["weights_mb"] > a.verif_fault_max_mb:
                    continue
                R.run(job, m, "torch.verif", me + ["--_torchverify", m, d, fm], result_file=os.path.join(W, "r.json"),
                      timeout=300,
                      extra=lambda row, log, f=f: _named(f, _res_verdict(row),
                                                         {"tensor": (row.get("result") or {}).get("first")},
                                                         "compare_intermediates=True"))
        if "fusion" in jobs:
            pj = os.path.join(W, f"{m}.fusion.locate.json")
            R.run("fusion", m, "parity", [P, "locate", mo, "--inputs", inp, "--opt", "all", "--no-ablation",
                                          "--json", pj], extra=lambda row, log, pj=pj: _parity_fusion(pj, row["rc"]))
            t0 = time.perf_counter()
            try:
                R.rows.append({"job": "fusion", "model": m, "tool": "mark-all probe", "rc": 0,
                               "wall_s": None, "probe": fusion_probe(d)})
            except Exception as e:  # noqa: BLE001
                R.rows.append({"job": "fusion", "model": m, "tool": "mark-all probe", "rc": 1, "error": str(e)[:300]})
            print(f"  fusion probe {m}: {R.rows[-1].get('probe') or R.rows[-1].get('error')} "
                  f"({time.perf_counter() - t0:.0f}s)", flush=True)
        write_reports(a, R.rows, info, time.perf_counter() - started)  # partial tables after each model
    total = time.perf_counter() - started
    write_reports(a, R.rows, info, total)


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


# --------------------------------------------------------------------------------------------
# reports


def _machine():
    import onnxruntime
    import torch
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    poly = subprocess.run([os.path.join(os.path.dirname(sys.executable), "polygraphy"), "--version"],
                          capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem / 2**30, 1),
            "os": platform.platform(), "python": platform.python_version(), "torch": torch.__version__,
            "onnxruntime_python": onnxruntime.__version__,
            "polygraphy": (re.search(r"Version: (\S+)", poly) or re.search(r"(.*)", poly)).group(1),
            "loadavg_at_end": os.getloadavg()}


def _ratio(a, b):
    if a is None or b is None or not a:
        return None
    return round(b / a, 2)


def write_reports(a, rows, info, total):
    argv = [os.path.relpath(sys.executable, REPO) if sys.executable.startswith(REPO) else sys.executable,
            os.path.relpath(os.path.abspath(__file__), REPO)] + sys.argv[1:]
    doc = {"schema": "parity.peers/1", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": " ".join(shlex.quote(x) for x in argv), "total_s": round(total, 1),
           "machine": _machine(), "parity_version": subprocess.run([a.parity, "--version"], capture_output=True,
                                                                   text=True).stdout.strip(),
           "tolerance_given_to_peers": {"atol": ATOL, "rtol": RTOL}, "models": info, "rows": rows}
    by = {}
    for r in rows:
        by.setdefault((r["job"], r["model"]), {})[r["tool"]] = r
    doc["ratios"] = []
    for (job, m), tools in by.items():
        p = tools.get("parity")
        if not p or job == "fusion":
            continue
        for t, r in tools.items():
            if t == "parity":
                continue
            doc["ratios"].append({"job": job, "model": m, "peer": t,
                                  "wall_x": _ratio(p.get("wall_s"), r.get("wall_s")),
                                  "rss_x": _ratio(p.get("peak_rss_mb"), r.get("peak_rss_mb"))})
    tmp = a.json + ".tmp"
    json.dump(doc, open(tmp, "w"), indent=1)
    os.replace(tmp, a.json)
    md = render_md(doc, by)
    try:  # keep the hand-written analysis below the marker
        old = open(a.md).read()
        if "<!-- analysis -->" in old:
            md = md.split("<!-- analysis -->")[0] + "<!-- analysis -->" + old.split("<!-- analysis -->", 1)[1]
    except OSError:
        pass
    tmp = a.md + ".tmp"
    open(tmp, "w").write(md)
    os.replace(tmp, a.md)
    print(f"wrote {a.md} and {a.json} ({total:.0f} s)")


def _fmt(x, nd=1):
    return "–" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))


def render_md(doc, by):
    L = []
    mach = doc["machine"]
    L.append("# parity and its peers (issue 17)\n")
    L.append("Numbers from **one run** of `bench/peers/run_peers.py` (reports, never gates CI). "
             "Generated; the analysis below the tables is written by hand from this run's JSON "
             "(`docs/peers.json`, every row with its command line).\n")
    L.append("```sh\n" + doc["command"] + "\n```\n")
    L.append(f"Run {doc['date']}, {doc['total_s']:.0f} s in all. Machine: {mach['cpu']}, {mach['cores']} cores, "
             f"{mach['memory_gib']} GiB, shared with other builds (load average at the end "
             f"{', '.join('%.1f' % x for x in mach['loadavg_at_end'])}); {mach['os']}. {doc['parity_version']} "
             f"(its own ORT), Python ORT {mach['onnxruntime_python']}, Polygraphy {mach['polygraphy']}, torch {mach['torch']}. "
             f"Every tool is its own process under `nice`; wall time and peak RSS come from GNU time (`/usr/bin/time -f '%e %M'`), which forks the tool from its own small process. "
             f"Peers were given atol {ATOL}, rtol {RTOL} (parity uses its own scaled / fp64-calibrated band).\n")
    L.append("| model | weights MB | .onnx MB | opset |\n| --- | ---: | ---: | ---: |")
    for m, i in doc["models"].items():
        L.append(f"| {m} | {i['weights_mb']} | {i['onnx_mb']} | {i.get('opset')} |")
    L.append("")
    ratio = {(r["job"], r["model"], r["peer"]): r for r in doc["ratios"]}

    def table(job_prefix, title, cols_extra):
        keys = [k for k in by if k[0].startswith(job_prefix)]
        if not keys:
            return
        L.append(f"## {title}\n")
        L.append("| job | model | tool | verdict | names | wall s | peak RSS MiB | " + "".join(c[0] + " | " for c in cols_extra)
                 + "wall ratio (peer / parity) | peak-RSS ratio (peer / parity) |")
        L.append("| --- | --- | --- | --- | --- | ---: | ---: | " + "".join("---: | " for _ in cols_extra) + "---: | ---: |")
        for k in keys:
            for t, r in by[k].items():
                q = ratio.get((k[0], k[1], t), {})
                names = r.get("names")
                if isinstance(names, dict):
                    names = names.get("module") or names.get("node") or names.get("tensor")
                    if r.get("right") is not None:
                        names = f"{names} ({'right' if r['right'] else 'WRONG'})"
                elif isinstance(names, list):
                    names = ", ".join(names[:3])
                L.append(f"| {k[0]} | {k[1]} | {t} | {r.get('verdict', '' if r['rc'] == 0 else 'rc=%d' % r['rc'])} | "
                         f"{names or ''} | {_fmt(r.get('wall_s'))} | {_fmt(r.get('peak_rss_mb'), 0)} | "
                         + "".join(c[1](r) + " | " for c in cols_extra)
                         + f"{_fmt(q.get('wall_x'), 2)} | {_fmt(q.get('rss_x'), 2)} |")
        L.append("")

    table("check", "1. Outputs vs PyTorch at the deployed config (ORT `all`)", [])
    table("layerwise", "2. Every layer, unfused baseline (`disable`)",
          [("MB written", lambda r: _fmt(r.get("bytes_written", 0) / 1e6 if r.get("bytes_written") is not None else None))])
    table("fault", "3. Planted faults: who names the right node/module",
          [("how", lambda r: r.get("how", ""))])
    fus = [k for k in by if k[0] == "fusion"]
    if fus:
        L.append("## 3b. Does observing change ORT's fused plan? (`all`)\n")
        L.append("| model | parity observer_check | parity fused nodes / optimized nodes | parity observed, unchecked | "
                 "parity verdict at all vs disable | parity locate s | mark-all: optimized nodes plain -> marked | "
                 "mark-all: outputs bitwise equal | max output change | op counts plain->marked (changed only) |")
        L.append("| --- | --- | --- | --- | --- | ---: | --- | --- | ---: | --- |")
        for k in fus:
            p = by[k].get("parity", {})
            pr = (by[k].get("mark-all probe") or {}).get("probe") or {}
            L.append(f"| {k[1]} | {p.get('observer_check')} ({p.get('observer_mode')}) | {p.get('fused_nodes')} / "
                     f"{p.get('optimized_nodes')} | {p.get('observed')}, {p.get('unchecked')} | {p.get('verdict')} | "
                     f"{_fmt(p.get('wall_s'))} | {pr.get('nodes_plain')} -> {pr.get('nodes_marked')} | "
                     f"{pr.get('outputs_bitwise_equal')} | {'%.2g' % pr['max_abs_output_change'] if pr else ''} | "
                     f"{', '.join('%s %d->%d' % (o, v[0], v[1]) for o, v in (pr.get('op_counts_changed') or {}).items())} |")
        L.append("")
    L.append("<!-- analysis -->\n")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    main()
