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
import json
import os
import shutil
import sys
import time
from collections import namedtuple

from peer_common import ATOL, DEFAULT_MODELS, REPO, RTOL, SCRIPT

sys.path[:0] = [os.path.join(REPO, "python"), os.path.join(REPO, "python", "tests")]  # the package, the zoo

from peer_children import _mark_all, fusion_probe, seed_main, torchverify_main  # noqa: E402
from peer_models import do_export, plant_faults  # noqa: E402
from peer_report import render_md, write_reports  # noqa: E402
from peer_runner import Runner, measure, polygraphy_failed  # noqa: E402
from peer_verdicts import _named, _parity_fault, _parity_fusion, _parity_verdict, _poly_fault, _res_verdict  # noqa: E402

# One model's cached files: its folder, the ONNX model, the PyTorch dump, the inputs, and
# Polygraphy's JSON inputs and PyTorch outputs.
ModelFiles = namedtuple("ModelFiles", "d mo dump inp pin pout")


def model_files(cache, m):
    d = os.path.join(cache, m)
    return ModelFiles(d, os.path.join(d, "model.onnx"), os.path.join(d, "dump"), os.path.join(d, "inputs.npz"),
                      os.path.join(d, "poly_inputs.json"), os.path.join(d, "torch_outputs.json"))


def parse_args():
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
    return ap.parse_args()


def render_only(a):
    """Re-renders --md from --json, keeping the hand-written analysis below the marker."""
    doc = json.load(open(a.json))
    by = {}
    for r in doc["rows"]:
        by.setdefault((r["job"], r["model"]), {})[r["tool"]] = r
    md = render_md(doc, by)
    old = open(a.md).read() if os.path.exists(a.md) else ""
    if "<!-- analysis -->" in old:
        md = md.split("<!-- analysis -->")[0] + "<!-- analysis -->" + old.split("<!-- analysis -->", 1)[1]
    open(a.md, "w").write(md)


def export_models(a, models, me):
    """Exports (cached) and plants faults; returns {model: export facts} for the models that exported."""
    info = {}
    for m in models:
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
    return info


def job_check(R, P, me, m, f):
    """Outputs vs PyTorch at the deployed config, by each tool."""
    W = R.work
    pj = os.path.join(W, f"{m}.check.parity.json")
    R.run("check", m, "parity", [P, "check", f.mo, "--torch", f.dump, "--inputs", f.inp, "--opt", "all",
                                 "--runs", "1", "--warmup", "0", "--json", pj],
          extra=lambda row, log, pj=pj: {"verdict": _parity_verdict(pj, row["rc"])})
    R.run("check", m, "polygraphy", [R.poly, "run", f.mo, "--onnxrt", "--load-inputs", f.pin,
                                     "--load-outputs", f.pout, "--atol", str(ATOL), "--rtol", str(RTOL)],
          extra=lambda row, log: {"verdict": "PASS" if row["rc"] == 0 else "FAIL",
                                  "names": polygraphy_failed(log)})
    rf = os.path.join(W, "r.json")
    R.run("check", m, "torch.verif", me + ["--_torchverify", m, f.d, "-"], result_file=rf,
          extra=lambda row, log: {"verdict": _res_verdict(row)})
    R.run("check", m, "seed", me + ["--_seed", "check", f.d, ""], result_file=rf,
          extra=lambda row, log: {"verdict": _res_verdict(row)})


def job_layerwise(R, P, me, m, f):
    """Every tensor at `disable`; keeps Polygraphy's healthy mark-all JSON for the fault job."""
    W = R.work
    out = os.path.join(W, f"{m}.baseline")
    shutil.rmtree(out, ignore_errors=True)
    R.run("layerwise", m, "parity", [P, "baseline", f.mo, "--inputs", f.inp, "-o", out, "--no-determinism-check"],
          out_path=out)
    shutil.rmtree(out, ignore_errors=True)
    out = os.path.join(W, f"{m}.poly_all.json")
    R.run("layerwise", m, "polygraphy", [R.poly, "run", f.mo, "--onnxrt", "--graph-optimization-level",
                                         "ORT_DISABLE_ALL", "--onnx-outputs", "mark", "all",
                                         "--load-inputs", f.pin, "--save-outputs", out], out_path=out)
    keep_poly = os.path.join(f.d, "healthy_all.json")  # the healthy model's every tensor, for the fault job
    if os.path.exists(out):
        os.replace(out, keep_poly)
    out = os.path.join(W, f"{m}.seed_all")
    shutil.rmtree(out, ignore_errors=True)
    R.run("layerwise", m, "seed", me + ["--_seed", "layerwise", f.d, out], result_file=os.path.join(W, "r.json"),
          out_path=out)
    shutil.rmtree(out, ignore_errors=True)
    # The job's own floor (issue 26): layerwise_floor_bench, built beside parity with the benchmarks,
    # on the mark-all model written once beforehand (untimed, cached): ORT's session at `disable`, one
    # run, one .npy per tensor, as a process of its own on parity's ORT.
    floor = os.path.join(os.path.dirname(os.path.abspath(P)), "layerwise_floor_bench")
    if os.path.exists(floor):
        marked = os.path.join(f.d, "marked.onnx")
        if not os.path.exists(marked):
            mm, _ = _mark_all(f.mo)
            with open(marked + ".tmp", "wb") as fh:
                fh.write(mm.SerializeToString())
            os.replace(marked + ".tmp", marked)
        out = os.path.join(W, f"{m}.floor")
        shutil.rmtree(out, ignore_errors=True)
        R.run("layerwise", m, "floor", [floor, marked, f.inp, out], out_path=out)
        shutil.rmtree(out, ignore_errors=True)


def job_fault(R, P, me, m, f, kind, fault, run_verif):
    """One planted fault: which node or module each tool names."""
    W = R.work
    fm = os.path.join(f.d, "faults", f"{kind}.onnx")
    job = f"fault:{kind}"
    pj = os.path.join(W, f"{m}.{kind}.locate.json")
    R.run(job, m, "parity", [P, "locate", fm, "--reference", "torch:" + f.dump, "--inputs", f.inp,
                             "--json", pj],
          extra=lambda row, log, pj=pj, f=fault: _parity_fault(pj, row["rc"], f))
    R.run(job, m, "polygraphy", [R.poly, "run", fm, "--onnxrt", "--load-inputs", f.pin,
                                 "--load-outputs", f.pout, "--atol", str(ATOL), "--rtol", str(RTOL)],
          extra=lambda row, log, f=fault: _named(f, "PASS" if row["rc"] == 0 else "FAIL",
                                                 None, "vs PyTorch: outputs only"))
    hp = os.path.join(f.d, "healthy_all.json")
    if os.path.exists(hp):
        R.run(job, m, "polygraphy+onnx", [R.poly, "run", fm, "--onnxrt", "--graph-optimization-level",
                                          "ORT_DISABLE_ALL", "--onnx-outputs", "mark", "all",
                                          "--load-inputs", f.pin, "--load-outputs", hp,
                                          "--atol", str(ATOL), "--rtol", str(RTOL)],
              extra=lambda row, log, f=fault, mo=f.mo: _poly_fault(log, row["rc"], f, mo))
    R.run(job, m, "seed+onnx", me + ["--_seed", "fault", f.d, fm], result_file=os.path.join(W, "r.json"),
          extra=lambda row, log, f=fault: _named(f, _res_verdict(row),
                                                 (row.get("result") or {}).get("first") or None,
                                                 "vs the healthy ONNX model"))
    R.run(job, m, "seed", me + ["--_seed", "check", f.d, fm], result_file=os.path.join(W, "r.json"),
          extra=lambda row, log, f=fault: _named(f, _res_verdict(row), None, "vs PyTorch: outputs only"))
    if not run_verif:
        return
    R.run(job, m, "torch.verif", me + ["--_torchverify", m, f.d, fm], result_file=os.path.join(W, "r.json"),
          timeout=300,
          extra=lambda row, log, f=fault: _named(f, _res_verdict(row),
                                                 {"tensor": (row.get("result") or {}).get("first")},
                                                 "compare_intermediates=True"))


def job_fusion(R, P, m, f):
    """Does observing change ORT's fused plan: parity's observer check and the mark-all probe."""
    pj = os.path.join(R.work, f"{m}.fusion.locate.json")
    R.run("fusion", m, "parity", [P, "locate", f.mo, "--inputs", f.inp, "--opt", "all", "--no-ablation",
                                  "--json", pj], extra=lambda row, log, pj=pj: _parity_fusion(pj, row["rc"]))
    t0 = time.perf_counter()
    try:
        R.rows.append({"job": "fusion", "model": m, "tool": "mark-all probe", "rc": 0,
                       "wall_s": None, "probe": fusion_probe(f.d)})
    except Exception as e:  # noqa: BLE001
        R.rows.append({"job": "fusion", "model": m, "tool": "mark-all probe", "rc": 1, "error": str(e)[:300]})
    print(f"  fusion probe {m}: {R.rows[-1].get('probe') or R.rows[-1].get('error')} "
          f"({time.perf_counter() - t0:.0f}s)", flush=True)


def main():
    a = parse_args()
    if a.render_only:
        render_only(a)
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
    me = [R.py, SCRIPT]
    info = export_models(a, models, me)
    models = [m for m in models if m in info]
    P = a.parity
    for m in models:
        f = model_files(a.cache, m)
        print(f"== {m} ({info[m]['weights_mb']} MB of weights)", flush=True)
        if "check" in jobs:
            job_check(R, P, me, m, f)
        if "layerwise" in jobs:
            job_layerwise(R, P, me, m, f)
        if "fault" in jobs:
            for kind, fault in info[m]["faults"].items():
                job_fault(R, P, me, m, f, kind, fault, info[m]["weights_mb"] <= a.verif_fault_max_mb)
        if "fusion" in jobs:
            job_fusion(R, P, m, f)
        write_reports(a, R.rows, info, time.perf_counter() - started)  # partial tables after each model
    total = time.perf_counter() - started
    write_reports(a, R.rows, info, total)


if __name__ == "__main__":
    main()
