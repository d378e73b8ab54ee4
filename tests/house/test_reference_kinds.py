"""The reference kinds live in one place (issue 43): a branch on what kind of
reference a command was given (a config, a model, a baseline, a PyTorch dump)
is written only in the reference's home (src/engine/load/reference.*) and the
runners (src/engine/runner/), which turn a reference into values. Everywhere
else asks the reference for what it needs (`model_file()`, `torch_dump()`,
`RequireOrtReference`) or a runner for values. This test counts the branches
outside that home: 0. A failure names each file and line.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOME = ("src/engine/load/reference.", "src/engine/runner/")

# A comparison with, or a case on, a reference kind; a reference's kind
# compared; is_torch() asked.
BRANCH = re.compile(
    r"[!=]=\s*Reference::Kind::k\w+"
    r"|Reference::Kind::k\w+\s*[!=]="
    r"|case\s+Reference::Kind::"
    r"|reference\w*\s*(?:\.|->)\s*kind\s*[!=]="
    r"|(?:\.|->)\s*is_torch\s*\(\s*\)"
)


def branches_outside_home():
    found = []
    for path in sorted((ROOT / "src").rglob("*")):
        if path.suffix not in {".cc", ".h"} or path.name.endswith("_test.cc"):
            continue
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(HOME):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if BRANCH.search(line.split("//")[0]):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_branch_on_the_reference_kind_outside_its_home():
    found = branches_outside_home()
    assert not found, (
        f"{len(found)} branch(es) on the reference kind outside src/engine/load/reference.* and "
        "src/engine/runner/ (ask the reference: model_file(), torch_dump(), RequireOrtReference):\n"
        + "\n".join(found))


def test_the_pattern_sees_a_branch():
    # The test above could pass by matching nothing: these are branches.
    for line in ("if (o.reference.kind == Reference::Kind::kModel) {",
                 "if (Reference::Kind::kConfig != r.kind)",
                 "case Reference::Kind::kTorchDump: return 1;",
                 "if (reference->is_torch()) return RunLocateTorch();"):
        assert BRANCH.search(line), line
    for line in ("Reference{.kind = Reference::Kind::kModel, .path = p}",
                 "j[\"kind\"] = ReferenceKindName(Reference::Kind::kTorchDump);"):
        assert not BRANCH.search(line), line
