"""Layers point down only (docs/architecture.md, "Layers").

core <- onnx, ort, compare <- engine <- report <- cli; the Python binding
(src/python/) may include engine and report. Every `#include "x/..."` under
src/ is checked against that order, the sub-folders of src/engine/ must not
include each other in a cycle, and CMake must not link parity_report into
parity_engine. A failure names the file and line of each offending include.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

# A folder may include only folders of a lower rank (and itself).
RANK = {"core": 0, "onnx": 1, "ort": 1, "compare": 1, "engine": 2, "report": 3, "cli": 4}
# The binding sits beside cli: it binds the engine and the report.
EXTRA = {"python": {"core", "onnx", "ort", "compare", "engine", "report"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def includes():
    """(file, line number, including folder, included path) for every quoted include under src/."""
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".h", ".cc", ".in") or not path.is_file():
            continue
        rel = path.relative_to(SRC)
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m:
                yield rel, n, m.group(1)


def allowed(src_top, dst_top):
    if src_top == dst_top:
        return True
    if src_top in EXTRA:
        return dst_top in EXTRA[src_top]
    if src_top not in RANK or dst_top not in RANK:
        return True  # a folder outside the table (generated headers, nanobind) is not a layer
    if src_top in ("onnx", "ort", "compare") and dst_top in ("onnx", "ort", "compare"):
        return False  # the three adapters of rank 1 do not see each other
    return RANK[dst_top] < RANK[src_top]


def test_includes_point_down_the_layers():
    bad = []
    for rel, n, target in includes():
        src_top, dst_top = rel.parts[0], target.split("/")[0]
        if "/" in target and not allowed(src_top, dst_top):
            bad.append(f"src/{rel}:{n}: {src_top}/ includes \"{target}\" ({dst_top}/ is not below {src_top}/)")
    assert not bad, "includes pointing up (or across) the layers:\n" + "\n".join(bad)


def engine_graph():
    """{sub-folder: {included sub-folder: [(file, line), ...]}} among src/engine/*."""
    graph = {}
    for rel, n, target in includes():
        parts = target.split("/")
        if rel.parts[0] != "engine" or parts[0] != "engine" or len(rel.parts) < 3 or len(parts) < 3:
            continue
        a, b = rel.parts[1], parts[1]
        if a != b:
            graph.setdefault(a, {}).setdefault(b, []).append((f"src/{rel}", n, target))
    return graph


def cycles(graph):
    """Every strongly connected component of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_engine_sub_folders_form_no_cycle():
    graph = engine_graph()
    found = cycles(graph)
    lines = []
    for comp in found:
        lines.append("cycle among engine/" + ", engine/".join(comp) + ":")
        for a in comp:
            for b, where in sorted(graph.get(a, {}).items()):
                if b in comp:
                    lines += [f"  {f}:{n}: engine/{a} includes \"{t}\"" for f, n, t in where]
    assert not found, "\n".join(lines)


def test_cycle_finder_finds_a_cycle():
    # The checker itself: a two-folder cycle and a three-folder one are found, a chain is not.
    assert cycles({"run": {"locate": []}, "locate": {"run": []}}) == [["locate", "run"]]
    assert cycles({"a": {"b": []}, "b": {"c": []}, "c": {"a": []}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b": []}, "b": {"c": []}}) == []
    assert not allowed("engine", "report") and not allowed("compare", "onnx") and allowed("report", "engine")


def test_engine_library_links_no_report():
    text = (ROOT / "CMakeLists.txt").read_text()
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        if "parity_report_elsewhere" in line:
            bad.append(f"CMakeLists.txt:{n}: report sources compiled into another library: {line.strip()}")
    for m in re.finditer(r"parity_library\(\s*parity_engine\b([^)]*)\)", text):
        if "parity_report" in m.group(1):
            n = text.count("\n", 0, m.start()) + 1
            bad.append(f"CMakeLists.txt:{n}: parity_engine links parity_report")
    for m in re.finditer(r"target_(?:sources|link_libraries)\(\s*parity_engine\b([^)]*)\)", text):
        if "report" in m.group(1):
            n = text.count("\n", 0, m.start()) + 1
            bad.append(f"CMakeLists.txt:{n}: parity_engine gets report code: {m.group(0).strip()}")
    assert not bad, "\n".join(bad)


# Engine results are typed data: report/ alone turns them into JSON. The one
# exception is the baseline's manifest, which is a file format the engine
# writes and reads back (engine/baseline/), not a report.
JSON_ALLOWED = {"engine/baseline/baseline.h", "engine/baseline/baseline_internal.h", "engine/run/environment_json.h"}


def test_engine_result_headers_hold_no_json():
    bad = []
    for path in sorted((SRC / "engine").rglob("*.h")):
        rel = str(path.relative_to(SRC))
        if rel in JSON_ALLOWED:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if "nlohmann" in line:
                bad.append(f"src/{rel}:{n}: {line.strip()}")
    assert not bad, "engine headers with JSON inside (report/ writes JSON):\n" + "\n".join(bad)
