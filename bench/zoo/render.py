"""docs/verdicts.md from the scoreboard's rows (bench/zoo/scoreboard.py)."""

import re

_CACHE = re.compile(r"\S*zoo-real-cache/")


def _cell(v):
    if v in (None, "", []):
        return "-"
    if isinstance(v, list):
        v = ", ".join(str(x) for x in v)
    return _CACHE.sub("", str(v)).replace("|", "\\|").replace("\n", " ")


def _truth(t):
    if not t:
        return "-"
    return ", ".join(f"{k} {v}" for k, v in t.items() if k not in ("rows", "confident_anchors"))


def render(rows, summary, stamps, line, when):
    out = [HEADER.format(when=when, line=line), "",
           "| case | what | expected | check | locate | module named | node named | arithmetic named | "
           "check s | locate s | wrong |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        c, loc = r["check"], r.get("locate") or {}
        out.append("| " + " | ".join(_cell(x) for x in (
            r["case"], r.get("about"), r["expected"], c.get("verdict"), loc.get("verdict"),
            c.get("module") or loc.get("module"), c.get("node") or loc.get("node"),
            sorted(set((c.get("arithmetic") or []) + (loc.get("arithmetic") or []))),
            c.get("seconds"), loc.get("seconds"), "; ".join(p for _, p in r["problems"]) or "")) + " |")
    out += ["", "## Why each check failed (failed tests, first three)", ""]
    for r in rows:
        failed = r["check"].get("failed") or []
        if failed:
            out.append(f"- `{r['case']}`: " + "; ".join(_cell(f)[:240] for f in failed[:3]))
    wrong = [r for r in rows if r["problems"]]
    if wrong:
        out += ["", "## Reproduce the wrong ones (from build/zoo-real-cache)", ""]
        for r in wrong:
            runs = [r["check"]] + ([r["locate"]] if r.get("locate") else [])
            cmds = [f"`../parity {x['command']}`" for x in runs if x.get("command")]
            out.append(f"- `{r['case']}` ({'; '.join(p for _, p in r['problems'])}): " + " and ".join(cmds))
    out += ["", "## Truth of the derived copies (derived.py, measured on images the check does not see)", ""]
    for r in rows:
        if r.get("truth"):
            out.append(f"- `{r['case']}` (expected {r['expected']}): {_truth(r['truth'])}")
    out += ["", "## Build", ""]
    for group, s in sorted(stamps.items()):
        out.append(f"- `{group}`: {s.get('status')}, {s.get('seconds')} s to build"
                   + (f" ({s['error']})" if s.get("error") else ""))
    return "\n".join(out) + "\n"


HEADER = """# Verdicts on real exporters' models: the zoo's scoreboard

The rules behind these verdicts (what counts as evidence, coverage, conditioning): docs/evidence.md.

Measured {when} by `bench/zoo/scoreboard.py --write-docs` (issues 40 and 50). Every case is a
command a user runs on a model made by its real exporter from a config with seeded random weights
(python/tests/zoo_real: Ultralytics YOLOv8n, YOLOv8n-seg, YOLO11n and YOLO26n, torch's TorchScript
and dynamo exporters on torchvision, timm and transformers models, ONNX Runtime's quantizers and
float16 converter), or trained for seconds on synthetic images (`trained_*`); nothing is
downloaded. The expected verdict is what is true: a healthy export computes what PyTorch computes
(PASS); a planted fault (a weight scaled in PyTorch before the export, the dump made from the
healthy module) FAILs naming the planted module; a derived copy (int8, fp16) is healthy when its
outputs stay close on images the check does not see (`cases.py`, `expected_of`: classifier logits
within a quarter of their spread; a detector's boxes within 2% of their scale, its best class kept
on 95% of the anchors that show one; the trained classifier's copies: top-1 agreement with the
float model on 98% of 256 held-out images). A hand edit that keeps float32 (the Cast-only edit: an
int64 -> int64 Cast) must PASS, the same edit with a weight x1.005 must FAIL. Commands:
`parity check MODEL --torch DUMP --report DIR` and `parity locate MODEL --reference torch:DUMP`
(torch cases), `parity check COPY --reference-model FLOAT --report DIR` (derived cases).
python/tests/test_zoo_real.py asserts the same (the cases wrong today are xfail(strict)). Top-1
agreement is listed with the truth but used only for the trained classifier: a random-weight
classifier's logits sit close together, so its top-1 flips on errors far below their spread. A
right verdict can still come for a reason other than the defect: the failed tests below say what
failed (the saturated int8 copies, whose every class score is 0, fail on box elements beyond 4
steps of the output's own scale and on robustness samples, not on the scores). NOT JUDGED (exit 4:
the coverage cannot support a PASS) is counted wrong where a verdict is true.

**Summary:** {line}.

Rerun: `PYTHONPATH=python:python/tests .venv/bin/python -m zoo_real` (builds the cache once,
build/zoo-real-cache), then `.venv/bin/python bench/zoo/scoreboard.py --write-docs`."""
