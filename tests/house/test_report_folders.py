"""report/ is grouped by what it writes (issue 55, "the layout shows it").

A writer of one format lives in that format's folder: `*_console.*` and
`console_table.*` in report/console/, `*_json.*` and `json_helpers.*` in
report/json/, `html*` and `*_html.*` in report/html/, `junit.*` and
`*_junit.*` in report/junit/, `model_explorer*` in report/overlays/. What
spans formats (a result's header that declares writers in several folders,
`report_writer.*`, `check_summary.*`) stays at the top. A failure names the
file and the folder it belongs in.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
REPORT = ROOT / "src" / "report"

FOLDER_OF = [
    ("console", re.compile(r"(_console|^console_table|^ansi)(_test)?\.(cc|h)$")),
    ("json", re.compile(r"(_json|^json_helpers)(_test)?\.(cc|h)$")),
    ("html", re.compile(r"(^html|_html)[a-z_]*\.(cc|h)$")),
    ("junit", re.compile(r"(^junit|_junit)(_test)?\.(cc|h)$")),
    ("overlays", re.compile(r"^model_explorer[a-z_]*\.(cc|h)$")),
]


def folder_for(name):
    """The folder a file of this name belongs in, or None (it spans formats)."""
    for folder, pattern in FOLDER_OF:
        if pattern.search(name):
            return folder
    return None


def misplaced(paths):
    out = []
    for rel in paths:
        parts = pathlib.PurePosixPath(rel).parts
        want = folder_for(parts[-1])
        where = parts[-2] if len(parts) > 1 else ""
        if want is not None and where != want:
            out.append(f"src/report/{rel}: belongs in src/report/{want}/")
    return out


def test_each_writer_lives_in_its_formats_folder():
    files = [p.relative_to(REPORT).as_posix() for p in sorted(REPORT.rglob("*"))
             if p.is_file() and p.suffix in (".cc", ".h")]
    assert len(files) > 50, f"found {len(files)} files under src/report"
    bad = misplaced(files)
    assert not bad, "report writers outside their format's folder:\n" + "\n".join(bad)


def test_the_rule_places_writers_and_leaves_what_spans_formats():
    assert folder_for("check_json.cc") == "json" and folder_for("check_json_test.cc") == "json"
    assert folder_for("dataset_console.cc") == "console" and folder_for("console_table.h") == "console"
    assert folder_for("html_sections.cc") == "html" and folder_for("corpus_html.cc") == "html"
    assert folder_for("dataset_junit.cc") == "junit" and folder_for("model_explorer_view.h") == "overlays"
    for spans in ("dataset_report.h", "report_writer.cc", "check_summary.h", "generation_text.cc",
                  "control_flow_writer.h", "text_escape.cc", "runtimes_report.cc"):
        assert folder_for(spans) is None, spans
    assert misplaced(["check_json.cc"]) == ["src/report/check_json.cc: belongs in src/report/json/"]
    assert misplaced(["json/check_json.cc", "dataset_report.h"]) == []
