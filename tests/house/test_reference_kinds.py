"""The decision "which reference" is made once, where the references are built
(issues 43, 55). A reference is what a command judges its target against: an
ORT config of the same model, a reference model, a baseline, a PyTorch dump
(check's --torch and its further dumps), another ORT release (a child
runner), stored reference outputs.

A *reference-presence branch* is a conditional (`if`, `while`, `?:`, `&&`,
`||`, `!`) that decides what to do by which reference a command was given:
  - the reference's kind compared, or switched on (`Reference::Kind::k...`),
    or `is_torch()` asked;
  - a kind's accessor asked, which is null for every other kind
    (`model_file()`, `torch_dump()`): the answer is whether the kind is that one;
  - a runner's kind compared with the child's (`RanWhat::Kind::kOrtChild`):
    whether the reference runs in a child, on another release;
  - a reference's name compared with a string (`against != "torch"`);
  - the presence of a part that exists for one kind only, tested in a
    condition: the PyTorch dump options (`o.torch`, `options.more_torch`),
    the dumps and what was read from them (`ctx.torch.first()`,
    `torch.dumps.empty()`, `torch.traced_sample`, `torch.target_outputs`,
    `torch.curve_sample`, `torch.kept_reference`), a reference model
    (`reference_model`, `Derived()`), the reference's other ORT release
    (`reference.ort`, `reference.config.ort_library`), stored reference
    outputs (`reference_outputs.empty()`).
A loop over the references (`for (const TorchDump& d : ctx.torch.dumps)`) is
no branch: each reference does its part. Nor is an identity compare of two
models that both exist (locate's `&ctx.reference_model != &ctx.target_model`).

Home (where the references are built and asked): src/engine/load/reference*
(the parsed Reference; reference_model.*: the model an ORT reference runs,
ForReference), src/engine/runner/ (the runners that turn a reference
into values) and src/engine/check/check_reference* (check's references: the
ORT reference and the PyTorch dumps, declared in check_reference.h, built
once before the stages in check_reference_load.cc, run in
check_reference.cc (with check_reference_same_plan.*, whether the reference's
pass can run on the target's session), and what they give the later steps in
check_reference_stages.cc; each file under 400 lines), and
src/engine/dataset/dataset_reference* (check --dataset's reference: stored
outputs, or an ORT reference run by a Runner in process or on another
release; what it gives the evaluator, the entry loop, locate and a Ray
worker's arguments).
The home is kept to these files so that a new kind of reference is added in
one place; everything else asks the reference what it provides or loops over
the references.

This test counts the branches in src/engine outside the home. Not seen: the
CLI (parsing option strings into References), src/report/ (writing a
finished report's data), a request's option strings before they become a
Reference (locate's `reference_ort_library`), a config with no reference
run on a child (bench refuses one: its runner's kind against kOrtSession),
and a part under another name (a local alias of `traced_sample`). A failure
names each file and line.
"""

import collections
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOME = ("src/engine/load/reference", "src/engine/runner/", "src/engine/check/check_reference",
        "src/engine/dataset/dataset_reference")

# Files not yet converted, with their count (a ratchet: a count that changes
# fails until it is written here; a file at 0 leaves the list). Empty: every
# command's reference is decided in its home.
PENDING = {}

# A comparison with, or a case on, a reference kind; a reference's kind
# compared; is_torch() asked; a kind's accessor; the runner's kind; a
# reference's name compared with a string.
BRANCH = re.compile(
    r"[!=]=\s*Reference::Kind::k\w+"
    r"|Reference::Kind::k\w+\s*[!=]="
    r"|case\s+Reference::Kind::"
    r"|reference\w*\s*(?:\.|->)\s*kind\s*[!=]="
    r"|(?:\.|->)\s*is_torch\s*\(\s*\)"
    r"|\b(?:model_file|torch_dump)\s*\(\s*\)"
    r"|[!=]=\s*RanWhat::Kind::kOrtChild|RanWhat::Kind::kOrtChild\s*[!=]="
    r"|[!=]=\s*\"torch\"|\"torch\"\s*[!=]="
)

# A part of a reference that exists for one kind only.
PART = re.compile(
    r"(?<![&\w.>])(?:\w+(?:\(\s*\))?\s*(?:\.|->)\s*)*(?:"
    r"(?:o|opts|options)\s*\.\s*(?:torch|more_torch)\b"
    r"|torch\s*\.\s*(?:first\s*\(\s*\)|dumps\s*\.\s*(?:empty|size)\s*\(\s*\)"
    r"|traced_sample|target_outputs|curve_sample|kept_reference)"
    r"|reference_model\b"
    r"|Derived\s*\(\s*\)"
    r"|reference\s*\.\s*ort\b"
    r"|reference\s*\.\s*config\s*\.\s*ort_library\b"
    r"|reference_outputs\b"
    r")"
)
# The part tested: it stands inside an `if (` / `while (` condition still
# open, or it is an operand of a logical operator, a ternary's condition or a
# null / empty test.
OPENS = re.compile(r"\b(?:if|while)\s*\(")
BEFORE = re.compile(r"(?:&&|\|\||!|\?)\s*\(?\s*$|^\s*(?:&&|\|\|)")
AFTER = re.compile(
    r"^\s*(?:\.\s*(?:has_value|empty)\s*\(\s*\)|\s*[!=]=\s*nullptr)?\s*\)?\s*(?:\?|&&|\|\|)"
    r"|^\s*(?:\.\s*(?:has_value|empty)\s*\(\s*\)|\s*[!=]=\s*nullptr)")


def in_open_condition(before):
    opens = list(OPENS.finditer(before))
    if not opens:
        return False
    rest = before[opens[-1].end():]
    return rest.count("(") >= rest.count(")")


def is_branch(code):
    if BRANCH.search(code):
        return True
    for m in PART.finditer(code):
        before, after = code[:m.start()], code[m.end():]
        if in_open_condition(before) or BEFORE.search(before) or AFTER.search(after):
            return True
    return False


def branches_outside_home():
    found = []
    for path in sorted((ROOT / "src" / "engine").rglob("*")):
        if path.suffix not in {".cc", ".h"} or path.name.endswith("_test.cc"):
            continue
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(HOME):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if is_branch(line.split("//")[0]):
                found.append((rel, f"{rel}:{n}: {line.strip()}"))
    return found


def test_no_reference_presence_branch_outside_its_home():
    found = branches_outside_home()
    counts = collections.Counter(rel for rel, _ in found)
    unexpected = [line for rel, line in found if rel not in PENDING]
    assert not unexpected, (
        f"{len(unexpected)} reference-presence branch(es) outside src/engine/load/reference*, src/engine/runner/ "
        "and src/engine/check/check_reference* (ask the reference what it provides, or loop over the "
        "references):\n" + "\n".join(unexpected))
    grown = {f: (counts[f], n) for f, n in PENDING.items() if counts[f] != n}
    assert not grown, f"pending files whose count changed (found, listed): {grown}; lower the list"


def test_the_pattern_sees_a_branch():
    # The test above could pass by matching nothing: these are branches.
    for line in ("if (o.reference.kind == Reference::Kind::kModel) {",
                 "if (Reference::Kind::kConfig != r.kind)",
                 "case Reference::Kind::kTorchDump: return 1;",
                 "if (reference->is_torch()) return RunLocateTorch();",
                 "if (const auto* file = o.reference.model_file()) {",
                 "if (r.reference.torch_dump() != nullptr) return LocateTorch(r);",
                 "if (runner->ran().kind == RanWhat::Kind::kOrtChild) {",
                 "if (out.against != \"torch\" && out.comparison.status == Verdict::kFail &&",
                 "if (o.torch) given.push_back(&*o.torch);",
                 "o.torch ? \"PyTorch (--torch)\" : \"--reference-model\"));",
                 "if (const TorchDump* dump = ctx.torch.first()) {",
                 "cf.judged_against = ctx.torch.dumps.empty() ? \"the reference\" : \"PyTorch\";",
                 "if (ctx.torch.traced_sample)",
                 "const bool torch = ctx.target.plan && ctx.torch.curve_sample && ctx.torch.target_outputs;",
                 "if (ctx.torch.kept_reference && AllBitwiseEqual(a, b))",
                 "if (!subject.reference_model) return subject.model;",
                 "return subject.reference_model ? FitToSession(session, sample) : sample;",
                 "auto report = reference_model ? Locate(*reference_model, &model) : Locate(model, nullptr);",
                 "options.target_label = ctx.subject.Derived() ? ctx.subject.label : \"\";",
                 "auto report = ctx.reference.ort ? LocateOnTwoRuntimes(o) : Locate(m);",
                 "if (!evaluator.reference_outputs().empty()) {",
                 "if (!o.reference_outputs.empty() && o.reference.model_file() != nullptr)",
                 "if (!o.reference.config.ort_library.empty() && !reference.ModelsDiffer()) {",
                 "    && reference_model == nullptr) {"):
        assert is_branch(line), line
    # Not branches: building a reference, using a part that is there, a loop
    # over the references, two present models' identities.
    for line in ("Reference{.kind = Reference::Kind::kModel, .path = p}",
                 "j[\"kind\"] = ReferenceKindName(Reference::Kind::kTorchDump);",
                 "for (const TorchDump& d : ctx.torch.dumps) {",
                 "const TorchDump& dump = ctx.torch.dumps.front();",
                 "ctx.torch.curve_sample = sample;",
                 "r.reference_runtime = ctx.reference.ort;",
                 "LocateOne(o, model, reference_model, *sample, located);",
                 "if (&ctx.reference_model != &ctx.target_model && m.models) {",
                 "AddOutputs(result, *cmp, \"torch\");",
                 "if (layers && torch_options.keep) ctx.torch.kept_reference.emplace(std::move(kept));",
                 "Sample sample{\"torch\", std::move(inputs)};",
                 "if (runner->ran().kind == RanWhat::Kind::kOrtSession) continue;"):
        assert not is_branch(line), line
