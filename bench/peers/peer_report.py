"""The benchmark's reports: docs/peers.json (every row) and docs/peers.md (tables, machine facts)."""

import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys

from peer_common import ATOL, REPO, RTOL, SCRIPT


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
            os.path.relpath(SCRIPT, REPO)] + sys.argv[1:]
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
