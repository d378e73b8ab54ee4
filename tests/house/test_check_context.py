"""check is "run, then judge" (issue 55 item 3): the report is not carried
through the stages.

- check's `Context` (src/engine/check/check_internal.h) holds no report: each
  stage returns what it found (check_found.h) and RunCheck (check.cc) builds
  the report from it;
- no code in src/engine/check writes or reads `ctx.report` (nor a meter's
  `ctx_.report`);
- the Context does not grow again: at most MAX_CONTEXT_FIELDS fields (37 in
  issue 55's read; lower this number when a field leaves, never raise it).
locate's own Context (src/engine/locate) is another struct and not counted.
A failure names each file and line, or the fields.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECK = ROOT / "src" / "engine" / "check"
HEADER = CHECK / "check_internal.h"
MAX_CONTEXT_FIELDS = 9

STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# `ctx.report`, `ctx_.report`, `c->report`, `context.report`: the check's
# Context (or a holder of one) reaching for a report.
CONTEXT_REPORT = re.compile(r"\b(?:ctx_?|c|context)\s*(?:\.|->)\s*report\b")


def code(text):
    """The text without comments and string literals, line numbers kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return "\n".join(STRING.sub('""', line).split("//")[0] for line in text.splitlines())


def struct_fields(text, name):
    """The data members of `struct name { ... };` in `text`, as their
    declarations (methods and nested types left out); None when absent."""
    body = code(text)
    m = re.search(r"\bstruct\s+" + name + r"\s*\{", body)
    if not m:
        return None
    depth, start, statements = 1, m.end(), []
    i = start
    while depth and i < len(body):
        ch = body[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            # A method's body ended (no `;` follows): not a field; a brace
            # initializer or a nested type goes on to its `;`.
            if depth == 1 and not body[i + 1:].lstrip().startswith(";"):
                start = i + 1
        elif ch == ";" and depth == 1:
            statements.append(" ".join(body[start:i].split()))
            start = i + 1
        i += 1
    fields = []
    for s in statements:
        head = re.split(r"[={]", s, maxsplit=1)[0]
        if s and "(" not in head and not re.match(r"(using|struct|class|enum|friend|static)\b", s):
            fields.append(s)
    return fields


def context_report_uses(files):
    found = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        for n, line in enumerate(code(path.read_text(encoding="utf-8")).splitlines(), 1):
            if CONTEXT_REPORT.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def check_sources():
    return sorted(p for p in CHECK.glob("*") if p.suffix in (".cc", ".h") and not p.name.endswith("_test.cc"))


def test_the_check_context_holds_no_report():
    fields = struct_fields(HEADER.read_text(encoding="utf-8"), "Context")
    assert fields is not None, "no struct Context in src/engine/check/check_internal.h"
    reports = [f for f in fields if "Report" in f.split()[0] or re.search(r"\breport\w*$", f)]
    assert not reports, ("check's Context carries a report again (a stage returns what it found; RunCheck "
                         "builds the report): " + "; ".join(reports))


def test_the_check_context_does_not_grow():
    fields = struct_fields(HEADER.read_text(encoding="utf-8"), "Context")
    assert len(fields) <= MAX_CONTEXT_FIELDS, (f"check's Context has {len(fields)} fields, more than "
                                               f"{MAX_CONTEXT_FIELDS}: " + "; ".join(fields))


def test_no_check_code_writes_the_report_through_the_context():
    found = context_report_uses(check_sources())
    assert not found, ("check code reaches the report through its Context (return what the stage found; "
                       "RunCheck puts it into the report):\n" + "\n".join(found))


def test_the_patterns_see_a_report_in_the_context(tmp_path):
    # Not vacuous: the real tree has a Context with fields to count.
    assert 3 <= len(struct_fields(HEADER.read_text(encoding="utf-8"), "Context")) <= MAX_CONTEXT_FIELDS
    planted = """
struct Context {
  const CheckOptions& options;  // a comment; with a semicolon
  Subject subject;
  std::optional<Error> input_error;
  CheckReport report;
  const Sample* First() const { return nullptr; }
  struct Inner { int a; int b; };
  std::vector<int> v = {1, 2};
};
struct Other { CheckReport report; };
"""
    fields = struct_fields(planted, "Context")
    assert fields == ["const CheckOptions& options", "Subject subject", "std::optional<Error> input_error",
                      "CheckReport report", "std::vector<int> v = {1, 2}"]
    assert struct_fields(planted.replace("  CheckReport report;\n", ""), "Context")[3] == "std::vector<int> v = {1, 2}"
    stage = tmp_path / "check_planted.cc"
    stage.write_text('void S(Context& ctx) {\n  ctx.report.samples.push_back(r);\n'
                     '  auto& runs = ctx_.report.ort_runs;\n  c->report.notes.clear();\n'
                     '  // ctx.report in a comment\n  f("ctx.report in a string");\n'
                     '  r.notes.push_back(n);\n  report.stages.clear();\n  ctx.reference.results.Get(s);\n}\n')
    assert [line.split(":", 2)[1] for line in context_report_uses([stage])] == ["2", "3", "4"]
