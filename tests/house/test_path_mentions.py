"""Every source path a comment in src/ or a page of docs/ names exists.

Files move (engine/run/runner.h became engine/runner/session_run.h, the
report writers went into report/<format>/), and a comment naming the old
path sends a reader to a file that is not there. A mention is a path with a
folder and a source suffix (`engine/runner/session_run.h`,
`python/parity/torch/dumper.py`); it may be written from the repository's
root, from src/ (as includes are), from python/ or python/tests/, or from the
mentioning file's own folder. Files CMake generates (build/generated/...)
count as existing. A failure names each file, line and path.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
MENTION = re.compile(r"(?<![\w./-])((?:[\w-]+/)+[\w-]+\.(?:h|cc|py))(?![\w/])")
BASES = ("", "src", "python", "python/tests")


def generated_headers(root=ROOT):
    """The headers CMake writes under build/generated: core/build_info.h, ..."""
    cmake = [root / "CMakeLists.txt", *sorted((root / "src").rglob("*.cmake")), *sorted((root / "cmake").rglob("*"))]
    found = set()
    for path in cmake:
        if path.is_file():
            for m in re.finditer(r"generated/([\w/]+\.h)\b", path.read_text(errors="replace")):
                found |= {m.group(1), "generated/" + m.group(1)}
    return found


def mentions(root=ROOT):
    """(file, line number, path) for each path in a C++ comment under src/ or a line of docs/*.md."""
    for path in sorted((root / "src").rglob("*")):
        if path.suffix in (".h", ".cc") and path.is_file():
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if "//" in line:
                    for m in MENTION.finditer(line.split("//", 1)[1]):
                        yield path, n, m.group(1)
    for path in sorted((root / "docs").rglob("*.md")):
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in MENTION.finditer(line):
                yield path, n, m.group(1)


def stale(root=ROOT):
    generated = generated_headers(root)
    out = []
    for path, n, named in mentions(root):
        if named in generated or (path.parent / named).exists():
            continue
        if not any((root / base / named).exists() for base in BASES):
            out.append(f"{path.relative_to(root).as_posix()}:{n}: {named}")
    return out


def test_every_path_a_comment_or_doc_names_exists():
    found = stale()
    assert not found, "paths named in comments or docs that do not exist (name where the file is now):\n" + \
        "\n".join(found)


def test_a_moved_file_is_seen_and_the_forms_that_resolve_pass(tmp_path):
    (tmp_path / "src" / "engine" / "runner").mkdir(parents=True)
    (tmp_path / "src" / "engine" / "runner" / "session_run.h").write_text("// engine/runner/session_run.h\n")
    (tmp_path / "src" / "engine" / "runner" / "user.cc").write_text(
        '#include "engine/runner/session_run.h"\n'
        "int x;  // SourceOf (engine/run/runner.h) and session_run.h (engine/runner/session_run.h)\n"
        "// the sibling form: runner/session_run.h; generated: core/build_info.h\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("`src/engine/runner/session_run.h`, `src/engine/run/trace.cc`, DIR/x.json\n")
    (tmp_path / "CMakeLists.txt").write_text("configure_file(x ${CMAKE_BINARY_DIR}/generated/core/build_info.h)\n")
    assert stale(tmp_path) == ["src/engine/runner/user.cc:2: engine/run/runner.h",
                               "src/engine/runner/user.cc:3: runner/session_run.h",
                               "docs/a.md:1: src/engine/run/trace.cc"]


def test_the_real_tree_has_mentions_to_check():
    # Not vacuous: the walk finds the repository's comments and docs.
    found = {(path.relative_to(ROOT).as_posix(), named) for path, _, named in mentions()}
    assert ("src/onnx/model.h", "engine/runner/session_run.h") in found
    assert len(found) > 100
