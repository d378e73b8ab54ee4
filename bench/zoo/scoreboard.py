#!/usr/bin/env python3
"""The real exporters' zoo's scoreboard (issue 40): runs the commands a user
runs on every case of python/tests/zoo_real/cases.py and prints, per case, the
expected and the given verdict, the module and node parity named, the
arithmetic it named (bf16/fp16/tf32 in its why lines) and the time; with
--write-docs, docs/verdicts.md (the table and a summary).

    .venv/bin/python bench/zoo/scoreboard.py [--only CASE,...] [--no-locate] [--write-docs]

Environment: PARITY_BINARY (default build/parity), PARITY_ZOO_REAL_CACHE
(default build/zoo-real-cache; built first when missing or stale).
Exit code 0 when every case is right, 1 otherwise, 2 bad usage.
"""

import argparse
import datetime
import json
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path[:0] = [os.path.join(REPO, "python"), os.path.join(REPO, "python", "tests")]

from zoo_real import cache as zoo_cache  # noqa: E402
from zoo_real.cases import CASES, expected_of, truth_of  # noqa: E402
from zoo_real.verdicts import judge, run_case  # noqa: E402

DOCS = os.path.join(REPO, "docs", "verdicts.md")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=None, metavar="CASE,...")
    p.add_argument("--no-locate", action="store_true", help="run check only")
    p.add_argument("--out", default=os.path.join(REPO, "build", "zoo-real-reports"), metavar="DIR",
                   help="where the reports go")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the rows as JSON")
    p.add_argument("--write-docs", action="store_true", help="rewrite docs/verdicts.md")
    p.add_argument("--docs-out", default=DOCS, metavar="FILE", help="where --write-docs writes (docs/verdicts.md)")
    return p.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    binary = os.environ.get("PARITY_BINARY", os.path.join(REPO, "build", "parity"))
    if not os.access(binary, os.X_OK):
        print(f"scoreboard: error: no parity binary at {binary} (set PARITY_BINARY)", file=sys.stderr)
        return 2
    names = [n for n in (a.only or "").split(",") if n]
    cases = [c for c in CASES if not names or c.name in names]
    if names and len(cases) != len(names):
        print(f"scoreboard: error: unknown case in --only (cases: {', '.join(c.name for c in CASES)})",
              file=sys.stderr)
        return 2
    cache_dir = zoo_cache.default_cache_dir()
    stamps = zoo_cache.build(cache_dir, only=sorted({c.group for c in cases}), log=print)
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for case in cases:
        rows.append(score(case, stamps, cache_dir, binary, a))
        print_row(rows[-1])
    summary = summarize(rows)
    print(summary_line(summary))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "summary": summary}, f, indent=1)
    if a.write_docs:
        with open(a.docs_out, "w", encoding="utf-8") as f:
            f.write(render_docs(rows, summary, stamps))
    return 0 if not summary["wrong"] else 1


def score(case, stamps, cache_dir, binary, a):
    expected = expected_of(case, stamps)
    stamp = stamps.get(case.group) or {}
    if stamp.get("status") != "ok" or not os.path.exists(os.path.join(cache_dir, case.group, case.model)):
        return {"case": case.name, "expected": expected, "about": case.about, "planted": case.planted,
                "check": {"verdict": "NOT BUILT", "error": stamp.get("error")}, "locate": None,
                "problems": [["verdict", "not built"]], "truth": None}
    result = run_case(case, cache_dir, binary, a.out, locate=not a.no_locate)
    result.update(expected=expected, about=case.about, planted=case.planted, truth=truth_of(case, stamps),
                  problems=judge(case, expected, result))
    return result


def print_row(r):
    c = r["check"]
    loc = r.get("locate") or {}
    print(f"{r['case']:<26} expected {r['expected'] or '?':<4} check {c.get('verdict'):<5} "
          f"{c.get('seconds', 0):>6.1f} s  module {c.get('module')}  node {c.get('node')}  "
          f"arith {','.join(c.get('arithmetic') or []) or '-'}"
          + (f" | locate {loc.get('verdict')} {loc.get('module')} {loc.get('seconds', 0):.1f} s" if loc else "")
          + (f"  WRONG: {'; '.join(p for _, p in r['problems'])}" if r["problems"] else "  ok"))


def summarize(rows):
    def count(text):
        return sum(1 for r in rows for _, p in r["problems"] if p.endswith(text))
    planted = [r for r in rows if r.get("planted")]
    named = [r for r in planted if r["check"].get("verdict") == "FAIL"
             and not any(kind == "module" for kind, _ in r["problems"])]
    return {"cases": len(rows), "right": sum(1 for r in rows if not r["problems"]),
            "wrong": sum(1 for r in rows if r["problems"]), "false_pass": count("false PASS"),
            "false_fail": count("false FAIL"), "not_judged": count(" is true"), "planted": len(planted),
            "planted_named": len(named),
            "arithmetic_fp32": count("for an fp32 weight fault"),
            "arithmetic_derived": count("for a derived copy")}


def summary_line(s):
    return (f"{s['right']} of {s['cases']} cases right; false PASS {s['false_pass']}, false FAIL "
            f"{s['false_fail']}, NOT JUDGED where a verdict is true {s.get('not_judged', 0)} (check and locate "
            f"counted apart); planted modules named "
            f"{s['planted_named']} of {s['planted']}; bf16/fp16/tf32 named for fp32 faults {s['arithmetic_fp32']}, "
            f"for derived copies {s['arithmetic_derived']}")



def render_docs(rows, summary, stamps):
    from render import render  # bench/zoo/render.py
    return render(rows, summary, stamps, summary_line(summary),
                  datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


if __name__ == "__main__":
    sys.exit(main())
