"""The spine's forms (issue 55), seen by the house tests:

- the tolerance band's formula (atol + rtol * scale) is written once, in
  src/compare/band.h; the SIMD kernels that count out-of-band elements
  (src/compare/metrics_*) inline it per lane;
- ONNX Runtime sessions are created only by the Runner and the session
  helpers beneath it (a file elsewhere that creates one fails; the list of
  those that still did is empty since issue 55).
No file is longer than 400 lines: test_file_sizes.py.
A failure names each file and line.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

BAND = re.compile(r"\batol\s*\+\s*(?:[\w.\->()\[\]]+\s*(?:\.|->)\s*)?rtol\s*\*")
BAND_HOME = ("src/compare/band.h", "src/compare/metrics_")

# Where sessions may be created: ORT's adapter, the Runner, and the session
# helpers it runs on (engine/runner/session_run.*: CreateSession, RunSample).
# Any session type's Create (ort::Session, ort::BoundSession, ...) or CreateSession.
SESSION = re.compile(r"\b\w*Session::Create\s*\(|\bCreateSession\s*\(")
SESSION_HOME = ("src/ort/", "src/engine/runner/")
# The debt (issue 55): files that still create sessions themselves. Remove a
# file from this list when it asks a Runner instead; never add one.
SESSIONS_OUTSIDE_THE_RUNNER = set()  # paid off: every session is made beneath the Runner


def sources(*suffixes):
    for top in ("src", "python/parity", "tests/e2e"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and path.suffix in suffixes:
                yield path, path.relative_to(ROOT).as_posix()


STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def code_lines(path):
    """Each line without its comment and its string literals."""
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        yield n, STRING.sub('""', line).split("//")[0]


def test_the_band_formula_is_written_once():
    found = []
    for path, rel in sources(".cc", ".h"):
        if rel.startswith(BAND_HOME) or rel.endswith(("_test.cc", "_test_util.h")) or rel.startswith("tests/"):
            continue
        found += [f"{rel}:{n}: {line.strip()}" for n, line in code_lines(path) if BAND.search(line)]
    assert not found, "the band formula written outside src/compare/band.h (call Band(tol, scale)):\n" + "\n".join(found)


def test_the_band_pattern_sees_a_band():
    for line in ("const double band = tol.atol + tol.rtol * absmax;", "return t.atol + t.rtol * rms;",
                 "x = j.tolerance.tolerance.atol + j.tolerance.tolerance.rtol * j.ref_absmax;",
                 "if (a > atol + rtol * ar) ++m;"):
        assert BAND.search(line), line
    assert not BAND.search("const double band = Band(tol, absmax);")


def test_sessions_are_created_only_beneath_the_runner():
    creating = set()
    for path, rel in sources(".cc", ".h"):
        if rel.startswith(SESSION_HOME) or rel.endswith(("_test.cc", "_test_util.h")) or rel.startswith("tests/"):
            continue
        if any(SESSION.search(line) for _, line in code_lines(path)):
            creating.add(rel)
    new = sorted(creating - SESSIONS_OUTSIDE_THE_RUNNER)
    assert not new, "sessions created outside the Runner (engine/runner/runner.h: ask a Runner for values):\n" + \
        "\n".join(new)
    gone = sorted(SESSIONS_OUTSIDE_THE_RUNNER - creating)
    assert not gone, "these no longer create sessions: remove them from SESSIONS_OUTSIDE_THE_RUNNER:\n" + \
        "\n".join(gone)
