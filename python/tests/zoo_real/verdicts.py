"""Runs a zoo case's commands as a user runs them and reads what parity said:
the verdict, the module and node it named, the arithmetic it named, the time.

    parity check MODEL --torch DUMP --report DIR            (kind torch)
    parity locate MODEL --reference torch:DUMP --json FILE  (kind torch)
    parity check MODEL --reference-model FLOAT --report DIR (kind derived)
"""

import json
import os
import re
import shutil
import subprocess
import time

PATH = re.compile(r"\S*[/.]\S*onnx\S*")
ARITHMETIC = re.compile(r"\b(bf16|bfloat16|fp16|float16|tf32)\b", re.IGNORECASE)
JUDGED_EXITS = (0, 1, 4)  # passed, failed, not judged (the coverage cannot support a PASS): a report is written
VERDICTS = ("PASS", "FAIL", "NOT JUDGED")


def run_case(case, cache_dir, binary, out_dir, locate=True, timeout=900):
    """{"case", "expected" (filled by the caller), "check": {...}, "locate": {...} or None}."""
    group = os.path.join(cache_dir, case.group)
    model = os.path.join(group, case.model)
    reference = os.path.join(group, case.reference)
    report = os.path.join(out_dir, case.name)
    shutil.rmtree(report, ignore_errors=True)
    if case.kind == "torch":
        argv = [binary, "check", model, "--torch", reference, "--report", report]
    else:
        argv = [binary, "check", model, "--reference-model", reference, "--report", report]
    result = {"case": case.name, "check": _check(argv, report, timeout), "locate": None}
    if locate and case.kind == "torch":
        result["locate"] = _locate(binary, model, reference, os.path.join(out_dir, f"{case.name}.locate.json"),
                                   timeout)
    return result


def _run(argv, timeout):
    started = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, f"timed out after {timeout} s"
    return rc, err, round(time.perf_counter() - started, 1)


def _check(argv, report, timeout):
    rc, err, seconds = _run(argv, timeout)
    out = {"command": " ".join(_short(a) for a in argv[1:]), "rc": rc, "seconds": seconds}
    path = os.path.join(report, "report.json")
    if rc not in JUDGED_EXITS or not os.path.isfile(path):
        out.update(verdict=f"ERROR (exit {rc})", error=(err or "").strip().splitlines()[-1:] or [""])
        out["error"] = out["error"][0][:300]
        return out
    with open(path, encoding="utf-8") as f:
        r = json.load(f)
    out.update(read_check_report(r))
    return out


def read_check_report(r):
    """What a reader of report.json sees first."""
    module, node = named_location(r)
    failed = [f"{t['id']}: {t['reason']}" for t in r.get("failed_tests", [])]
    if r.get("overall_status") == "NOT JUDGED":  # what the coverage missed: the reason there is no verdict
        failed += [f"coverage.missing: {m}" for m in (r.get("coverage") or {}).get("missing", [])]
    return {"verdict": r.get("overall_status"), "module": module, "node": node,
            "failed": failed, "arithmetic": arithmetic_named(r),
            "arithmetic_diagnosis": arithmetic_named(r, ("summary", "arithmetic")), "notes": r.get("notes", [])}


def named_location(r):
    """(module, node) the report names: the first divergent layer against
    PyTorch, else the quantized layer it blames, else the located culprit."""
    a = r.get("alignment") or {}
    first = a.get("first_divergence") if isinstance(a, dict) else None
    if first:
        op = first.get("op") or {}
        return first.get("module"), op.get("node") or first.get("node")
    unexplained = a.get("unexplained") if isinstance(a, dict) else None
    if unexplained and unexplained.get("after_module"):
        return unexplained["after_module"], None
    q = r.get("quant") or {}
    worst = q.get("worst_local") if isinstance(q, dict) else None
    if isinstance(worst, dict) and (worst.get("module") or worst.get("node")):
        return worst.get("module"), worst.get("node")
    loc = r.get("locate") or {}
    culprits = loc.get("culprits") or []
    if culprits:
        return None, culprits[0].get("fused_node")
    fd = loc.get("first_divergence") or {}
    return None, fd.get("producer")


def arithmetic_named(r, keys=("why", "summary", "arithmetic")):
    """Every bf16/fp16/tf32 the report names as the arithmetic behind an error,
    in a tolerance's `why` line or the `arithmetic` diagnosis (sorted, lower
    case; paths such as fp16.onnx are not claims). keys=("summary",
    "arithmetic"): the diagnosis alone."""
    found = set()

    def walk(v, key=""):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and key in keys:
            found.update(m.lower() for m in ARITHMETIC.findall(PATH.sub("", v)))

    if "why" in keys:
        walk(r.get("samples"))
    walk(r.get("arithmetic"), "arithmetic")
    return sorted(found)


def _locate(binary, model, dump, path, timeout):
    if os.path.exists(path):
        os.remove(path)
    argv = [binary, "locate", model, "--reference", f"torch:{dump}", "--json", path]
    rc, err, seconds = _run(argv, timeout)
    out = {"command": " ".join(_short(a) for a in argv[1:]), "rc": rc, "seconds": seconds}
    if rc not in JUDGED_EXITS or not os.path.isfile(path):
        out.update(verdict=f"ERROR (exit {rc})", error=((err or "").strip().splitlines() or [""])[-1][:300])
        return out
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    first = j.get("first_divergence") or {}
    op = first.get("op") or {}
    verdict = "NOT JUDGED" if rc == 4 else "PASS" if j.get("passed") else "FAIL"
    out.update(verdict=verdict, module=first.get("module"),
               node=op.get("node") or first.get("node"), arithmetic=arithmetic_named(j),
               arithmetic_diagnosis=arithmetic_named(j, ("summary", "arithmetic")))
    if not first and j.get("unexplained"):
        out["module"] = j["unexplained"].get("after_module")
    return out


def _short(arg):
    """Paths shown from the cache folder on (the table stays readable);
    `torch:` kept in front of a dump."""
    if arg.startswith("torch:"):
        return "torch:" + _short(arg[len("torch:"):])
    return arg.split("zoo-real-cache/")[-1] if "/" in arg else arg


def judge(case, expected, result):
    """The problems with what parity said on a case, as (kind, text); kind is
    "verdict" (a false PASS / false FAIL, NOT JUDGED where a verdict is true,
    or a command that did not run),
    "module" (a planted fault named elsewhere) or "arithmetic" (bf16/fp16/tf32
    named for an fp32 weight fault or for a derived copy, which knows what it
    is). Empty: right."""
    problems = []
    runs = [("check", result["check"], expected)]
    if result.get("locate"):
        runs.append(("locate", result["locate"], case.locate_expected or expected))
    for label, r, want in runs:
        given = r.get("verdict")
        if given not in VERDICTS:
            problems.append(("verdict", f"{label}: {given}: {r.get('error')}"))
            continue
        if want and given != want:
            problems.append(("verdict", f"{label}: false {given}" if given != "NOT JUDGED"
                             else f"{label}: NOT JUDGED where {want} is true"))
        if case.planted and given == "FAIL" and not names_module(r.get("module"), case.planted):
            problems.append(("module", f"{label}: named {r.get('module')!r}, not {case.planted}"))
        # a derived copy's why lines may name its own dtype (float16 roundoffs of
        # an fp16 copy); what it may not get is a guess at the arithmetic
        named = r.get("arithmetic") if case.fp32_fault else r.get("arithmetic_diagnosis")
        if case.no_arithmetic and named:
            what = "an fp32 weight fault" if case.fp32_fault else "a derived copy"
            problems.append(("arithmetic", f"{label}: named {'/'.join(named)} arithmetic for {what}"))
    return problems


def names_module(named, planted):
    return bool(named) and (named == planted or named.startswith(planted + "."))
