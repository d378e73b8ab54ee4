"""A fresh configure compiles each target's files 8 to a translation unit
(CMakeLists.txt, PARITY_UNITY_BUILD): two files of one batch that both define
the same name at file scope (an anonymous namespace's function, type or
constant) do not compile there, although each compiles alone, as an
incremental `build/` configured with -DPARITY_UNITY_BUILD=OFF compiles them.
CI builds a clean clone, so that is where such a clash would first show.

This test computes the batches as CMake makes them (each target's sources in
glob order, files with options of their own left out, chunks of the batch
size) and fails on a name that two files of one batch define. A file added or
removed shifts the batches after it, so a clash can appear in files nobody
touched: the message names both files; rename one of the two helpers (or move
a shared one into a header both include).

What it reads is the text, not the compiler's view: a helper that shadows a
class of a header (`Tensor(...)` beside parity::Tensor) or an overload that
makes a call ambiguous only the unity build itself finds. On the tree before
the unity build (0623473) it names 13 of the 17 clashing names the compiler
found (not the four shadowing or ambiguous ones).
"""

import collections
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
KEYWORDS = {"if", "for", "while", "switch", "return", "namespace", "using", "else", "case", "do",
            "template", "typedef", "struct", "class", "enum", "static_assert", "operator"}


def file_scope_names(text):
    """Names a file defines for itself at namespace scope (column 0): all of an
    anonymous namespace's, and aliases, statics and constants elsewhere; a
    function's with its parameters' types (overloads do not clash)."""
    names, depth, anon_depth = set(), 0, None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        code = re.sub(r'"(\\.|[^"\\])*"', '""', re.sub(r"//.*", "", line))
        # In an anonymous namespace every name is the file's own; in a named
        # one, what has internal linkage there: aliases, statics, constants.
        in_anon = anon_depth is not None and depth == anon_depth
        internal = line.startswith(("using ", "static ", "constexpr ", "const "))
        if line and not line[0].isspace() and depth >= 1 and (in_anon or internal):
            name = _defined_name(line)
            if name and name.endswith("("):
                after = re.split(rf"\b{name[:-1]}\s*\(", " ".join(lines[i:i + 6]), maxsplit=1)
                name += _parameter_types(after[1] if len(after) > 1 else ")")
            if name:
                names.add(name)
        if anon_depth is None and re.match(r"\s*namespace\s*\{", code):
            anon_depth = depth + 1
        depth += code.count("{") - code.count("}")
        if anon_depth is not None and depth < anon_depth:
            anon_depth = None
    return names


def _defined_name(line):
    if line.startswith(("}", "#", "namespace", "return", "TEST", "INSTANTIATE", "template")):
        return None
    m = re.match(r"(?:struct|class|enum class|enum)\s+(\w+)", line)
    if m:
        return m.group(1)
    m = re.match(r"using\s+(\w+)\s*=\s*(.*);", line)
    if m:  # an alias may repeat with the same meaning
        return f"using {m.group(1)} = {m.group(2).strip()}"
    if line.startswith("using"):
        return None
    # A class's member defined out of line (`T Class::name`) is not at file scope.
    m = re.match(r"[\w:<>,*&\s]+?\b(\w+)\s*\(", line)
    if m and m.group(1) not in KEYWORDS:
        return None if line[:m.start(1)].endswith("::") else m.group(1) + "("
    m = re.match(r"(?:constexpr|const|static|inline|std::|[\w:<>]+)[^=(;]*?\b(\w+)\s*(?:=|\[|\{|;)", line)
    if not m or m.group(1) in KEYWORDS or line[:m.start(1)].endswith("::"):
        return None
    return m.group(1)


def _parameter_types(rest):
    """`int x, const std::string& s = "")` -> `int, const std::string&)`."""
    depth, end = 1, len(rest)
    for i, ch in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            end = i
            break
    params, depth, current = [], 0, ""
    for ch in rest[:end] + ",":
        depth += {"<": 1, ">": -1, "(": 1, ")": -1, "{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            params.append(current.split("=")[0].strip())
            current = ""
        else:
            current += ch
    types = []
    for p in params:
        m = re.match(r"^(.*[\s&*>])(\w+)$", p)
        t = m.group(1) if m and m.group(1).strip() not in ("const", "unsigned", "signed", "long", "short") else p
        types.append(re.sub(r"\s+", " ", t).strip())
    return ", ".join(t for t in types if t) + ")"


def _sorted(paths):
    return sorted(paths, key=lambda p: str(p))


def targets(root=ROOT):
    """Each unity target's sources in CMake's order, skipped files left out."""
    cmake = (root / "CMakeLists.txt").read_text()
    skipped = set()
    for block in re.findall(r"set_source_files_properties\(([^)]*?)PROPERTIES\s+SKIP_UNITY_BUILD_INCLUSION ON", cmake):
        skipped |= {root / p for p in block.split()}
    main = root / "tests" / "test_main.cc"
    out = {}
    for lib in ("core", "compare", "onnx", "ort", "engine", "report"):
        all_cc = _sorted((root / "src" / lib).rglob("*.cc"))
        out[f"parity_{lib}"] = [p for p in all_cc if not p.name.endswith("_test.cc") and p not in skipped]
        tests = [p for p in all_cc if p.name.endswith("_test.cc")]
        if tests:
            out[f"parity_{lib}_test"] = tests + [main]
    out["parity"] = _sorted((root / "src" / "cli").glob("*.cc"))
    e2e = root / "tests" / "e2e"
    out["parity_e2e_test"] = _sorted(list(e2e.glob("*_test.cc")) + list(e2e.glob("*_util.cc"))) + [main]
    return out


def batch_clashes(sources, size):
    clashes = []
    for start in range(0, len(sources), size):
        seen = collections.defaultdict(list)
        for path in sources[start:start + size]:
            for name in file_scope_names(path.read_text()):
                seen[name].append(path)
        clashes += [(name, paths) for name, paths in seen.items()
                    if len(paths) > 1 and not name.startswith("using ")]
        # A type or constant and a function of the same name clash too.
        by_base = collections.defaultdict(set)
        for name, paths in seen.items():
            if not name.startswith("using "):
                by_base[name.split("(")[0]] |= {(name, p) for p in paths}
        for base, entries in by_base.items():
            files = {p for _, p in entries}
            if base in seen and len(files) > 1 and len({n for n, _ in entries}) > 1:
                clashes.append((base, sorted(files)))
        # An alias may repeat with the same meaning, not with another.
        aliases = collections.defaultdict(list)
        for name, paths in seen.items():
            if name.startswith("using "):
                aliases[name.split()[1]] += paths
        clashes += [(alias, paths) for alias, paths in aliases.items()
                    if len({n for n in seen if n.startswith(f"using {alias} =")}) > 1]
    return clashes


def batch_size(root=ROOT):
    m = re.search(r"CMAKE_UNITY_BUILD_BATCH_SIZE\s+(\d+)", (root / "CMakeLists.txt").read_text())
    assert m, "CMakeLists.txt no longer sets CMAKE_UNITY_BUILD_BATCH_SIZE: update this test"
    return int(m.group(1))


def test_no_two_files_of_a_unity_batch_define_the_same_file_scope_name():
    size = batch_size()
    found = []
    for target, sources in targets().items():
        for name, paths in batch_clashes(sources, size):
            found.append(f"{target}: `{name}` in " + " and ".join(str(p.relative_to(ROOT)) for p in paths))
    assert not found, "names that clash in a unity batch (rename one):\n" + "\n".join(found)


def test_the_batches_are_cmakes(tmp_path):
    # The self-test: planted files, batched and scanned as above.
    src = tmp_path / "src"
    for lib in ("core", "compare", "onnx", "ort", "engine", "report", "cli"):
        (src / lib).mkdir(parents=True)
    (tmp_path / "tests" / "e2e").mkdir(parents=True)
    (tmp_path / "tests" / "test_main.cc").write_text("int main() {}\n")
    (tmp_path / "CMakeLists.txt").write_text(
        "set(CMAKE_UNITY_BUILD_BATCH_SIZE 2)\n"
        "set_source_files_properties(src/core/z_fast.cc PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)\n")
    helper = "namespace parity {\nnamespace {\n\nint Helper(int x) {\n  return x;\n}\n\n}  // namespace\n}\n"
    (src / "core" / "a.cc").write_text(helper)
    (src / "core" / "b.cc").write_text(helper.replace("int Helper", "struct Helper {};\nint Other"))
    (src / "core" / "c.cc").write_text(helper)  # the next batch: no clash with a.cc
    (src / "core" / "d.cc").write_text("namespace {\nusing Json = nlohmann::json;\nconstexpr int kLimit = 3;\n"
                                       "struct S {\n  int Helper();\n  static int n_;\n};\nint S::n_ = 0;\n"
                                       "int S::Helper() { return 1; }\n}\n")
    (src / "core" / "z_fast.cc").write_text(helper)  # out of the batches
    batches = targets(tmp_path)
    assert [p.name for p in batches["parity_core"]] == ["a.cc", "b.cc", "c.cc", "d.cc"]
    clashes = batch_clashes(batches["parity_core"], batch_size(tmp_path))
    assert [(n, [p.name for p in ps]) for n, ps in clashes] == [("Helper", ["a.cc", "b.cc"])]
    assert file_scope_names((src / "core" / "d.cc").read_text()) == {
        "using Json = nlohmann::json", "kLimit", "S"}  # a member is not at file scope
    # The same alias twice is no clash; another meaning is.
    (src / "core" / "c.cc").write_text("namespace {\nusing Json = nlohmann::json;\n}\n")
    assert batch_clashes(batches["parity_core"][2:], 2) == []
    (src / "core" / "c.cc").write_text("namespace {\nusing Json = nlohmann::ordered_json;\n}\n")
    assert [(n, sorted(p.name for p in ps)) for n, ps in batch_clashes(batches["parity_core"][2:], 2)] == [
        ("Json", ["c.cc", "d.cc"])]
