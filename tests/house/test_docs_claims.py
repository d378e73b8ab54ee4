"""Every test that docs/ cites exists, and the repository is self-contained:
no source cites a contract outside it."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

# `Suite.Name` or `Suite.*` in backticks, GoogleTest style (CamelCase suite).
CITED = re.compile(r"`([A-Z][A-Za-z0-9]+)\.([A-Z][A-Za-z0-9_]+|\*)`")
DEFINED = re.compile(r"\bTEST(?:_F|_P)?\(\s*([A-Za-z0-9_]+)\s*,\s*([A-Za-z0-9_]+)\s*\)")


def defined_tests():
    tests = set()
    for path in list(ROOT.glob("src/**/*_test.cc")) + list(ROOT.glob("tests/**/*.cc")):
        tests.update(DEFINED.findall(path.read_text(errors="replace")))
    return tests


def test_every_test_cited_in_docs_exists():
    tests = defined_tests()
    suites = {s for s, _ in tests}
    missing = []
    for doc in sorted(ROOT.glob("docs/**/*.md")) + [ROOT / "README.md", ROOT / "fuzz" / "README.md"]:
        if not doc.exists():
            continue
        for suite, name in CITED.findall(doc.read_text()):
            if suite not in suites and not any(s.endswith(suite) for s in suites):
                # Not a GoogleTest suite at all (a class or file name in prose) unless it looks like one.
                if name == "*" or name[0].isupper() and len(name) > 12:
                    missing.append(f"{doc.relative_to(ROOT)}: {suite}.{name}")
                continue
            if name != "*" and (suite, name) not in tests and not any(
                    s.endswith(suite) and n == name for s, n in tests):
                missing.append(f"{doc.relative_to(ROOT)}: {suite}.{name}")
    assert not missing, "tests cited in the docs that do not exist:\n" + "\n".join(missing)


def test_no_source_cites_a_contract_outside_the_repository():
    hits = []
    for path in list(ROOT.glob("src/**/*")) + list(ROOT.glob("python/**/*.py")) + list(ROOT.glob("docs/**/*")):
        if path.is_file() and path.suffix in {".cc", ".h", ".py", ".md", ".json", ".in"}:
            text = path.read_text(errors="replace")
            if "SPEC.md" in text or "USERS.md" in text:
                if path.name != "test_docs_claims.py":
                    hits.append(str(path.relative_to(ROOT)))
    assert not hits, hits
