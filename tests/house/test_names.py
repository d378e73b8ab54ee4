"""No two headers under src/ share a file name (issue 55, "the layout shows it").

Two `runner.h` (engine/run, engine/runner), two `control_flow_report.h`
(engine/run, report) and `onnx/control_flow.h` beside `engine/run/control_flow.h`
made the structure tools draw arrows between the wrong files, and a reader
open the wrong one. A header's name says what it holds, once in the tree.
"""

import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
HEADER_SUFFIXES = (".h", ".hpp")


def shared_names(paths):
    """{file name: [paths]} for every name more than one of `paths` has."""
    by_name = collections.defaultdict(list)
    for path in paths:
        by_name[pathlib.PurePosixPath(path).name].append(path)
    return {name: sorted(found) for name, found in by_name.items() if len(found) > 1}


def headers():
    return [p.relative_to(ROOT).as_posix() for p in sorted(SRC.rglob("*"))
            if p.is_file() and p.suffix in HEADER_SUFFIXES]


def test_no_two_headers_share_a_name():
    found = headers()
    assert len(found) > 100, "the header walk found too few headers: " + str(len(found))
    shared = shared_names(found)
    assert not shared, "headers that share a name (rename one to say what it holds):\n" + "\n".join(
        f"{name}: {', '.join(paths)}" for name, paths in sorted(shared.items()))


def test_shared_names_sees_a_clash_and_only_a_clash():
    clash = ["src/engine/run/runner.h", "src/engine/runner/runner.h", "src/report/html/html.h"]
    assert shared_names(clash) == {"runner.h": ["src/engine/run/runner.h", "src/engine/runner/runner.h"]}
    healthy = ["src/engine/run/session_run.h", "src/engine/runner/runner.h", "src/report/runner_report.h"]
    assert shared_names(healthy) == {}
