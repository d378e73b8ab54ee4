"""Reads what scripts/gpu-check.sh wrote and prints the table of docs/gpu.md.

    python3 scripts/gpu_summary.py RESULTS_DIR > table.md    (also writes RESULTS_DIR/gpu-results.json)

One row per model and run: the reference and target configs, parity's exit code and
verdict, the arithmetic parity names (and the TF32 re-run's evidence), the node locate
names, latency p50 of the target, its GPU arena peak, session creation time, and
which EPs took how many nodes. Standard library only: it runs under any python3.
"""
import json
import os
import sys


def _load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _exit(path):
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _assignment(entries):
    counts = [f"{e['ep'].replace('ExecutionProvider', '')} {len(e.get('nodes', []))}" for e in entries or []]
    return ", ".join(counts) or "-"


def _check_row(report):
    perf = [p for p in report.get("performance", []) if "cuda" in p.get("config", "") or
            "tensorrt" in p.get("config", "")]
    target = perf[-1] if perf else (report.get("performance") or [{}])[-1]
    arithmetic = report.get("arithmetic") or {}
    gpu = target.get("gpu_peak_bytes")
    failed = [t for t in report.get("failed_tests", [])][:3]
    return {
        "verdict": report.get("overall_status"),
        "failed": failed,
        "arithmetic": arithmetic.get("arithmetic", "-"),
        "fix": arithmetic.get("fix", ""),
        "tf32_probe": report.get("tf32_probe") or "",
        "p50_ms": (target.get("latency") or {}).get("p50_ms"),
        "session_ms": target.get("session_creation_ms"),
        "gpu_peak_mib": round(gpu / 1048576, 1) if isinstance(gpu, int) else None,
        "assignment": _assignment(report.get("target_assignment")),
        "worst_output_error": _worst(report),
    }


def _worst(report):
    worst = None
    for s in report.get("samples", []):
        for o in s.get("outputs", []):
            m = (o.get("comparison") or {}).get("metrics") or o.get("metrics") or {}
            v = m.get("max_abs")
            if isinstance(v, (int, float)) and (worst is None or v > worst):
                worst = v
    return worst


def _locate_row(report):
    culprits = report.get("culprits") or []
    top = culprits[0] if culprits else {}
    first = report.get("first_divergence") or {}
    return {
        "verdict": "{fail} failing, {pass} passing, {unchecked} unchecked tensors".format(
            **{k: (report.get("summary") or {}).get(k, "?") for k in ("fail", "pass", "unchecked")}),
        "culprit": f"{top.get('fused_node', '-')} ({top.get('op_type', '')})" if top else "-",
        "first_divergence": first.get("fused_node") or first.get("tensor") if isinstance(first, dict) else first,
        "arithmetic": (report.get("arithmetic") or {}).get("arithmetic", "-"),
        "assignment": _assignment(report.get("target_assignment")),
    }


def main(argv):
    root = argv[1]
    rows = []
    for model in sorted(os.listdir(root)):
        d = os.path.join(root, model)
        if not os.path.isdir(d):
            continue
        for run in sorted(os.listdir(d)):
            rd = os.path.join(d, run)
            row = {"model": model, "run": run, "exit": _exit(os.path.join(rd, "exit"))}
            check = _load(os.path.join(rd, "report", "report.json"))
            locate = _load(os.path.join(rd, "locate.json"))
            if check:
                row.update(_check_row(check))
            if locate:
                row.update({"locate_" + k: v for k, v in _locate_row(locate).items()})
            try:
                with open(os.path.join(rd, "stderr.txt"), encoding="utf-8") as f:
                    err = [line for line in f.read().splitlines() if line.strip()]
                row["stderr"] = err[-1][:300] if err else ""
            except OSError:
                pass
            rows.append(row)
    with open(os.path.join(root, "gpu-results.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    print("| model | run | exit | verdict | arithmetic named | target p50 ms | GPU arena peak MiB | session ms | "
          "EP assignment | locate: top culprit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        def num(v, fmt="{:.3f}"):
            return fmt.format(v) if isinstance(v, (int, float)) else "-"
        print(f"| {r['model']} | {r['run']} | {r['exit']} | {r.get('verdict') or r.get('locate_verdict') or '-'} | "
              f"{r.get('arithmetic', r.get('locate_arithmetic', '-'))} | {num(r.get('p50_ms'))} | "
              f"{num(r.get('gpu_peak_mib'), '{:.1f}')} | {num(r.get('session_ms'), '{:.0f}')} | "
              f"{r.get('assignment', r.get('locate_assignment', '-'))} | {r.get('locate_culprit', '-')} |")
    probes = [r for r in rows if r.get("tf32_probe")]
    if probes:
        print("\nTF32 re-runs (check_tf32.cc):\n")
        for r in probes:
            print(f"- {r['model']} / {r['run']}: {r['tf32_probe']}")
    errs = [r for r in rows if r.get("exit") not in (0, 1) and r.get("stderr")]
    if errs:
        print("\nRuns that ended without a verdict:\n")
        for r in errs:
            print(f"- {r['model']} / {r['run']} (exit {r['exit']}): {r['stderr']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
