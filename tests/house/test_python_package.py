"""The Python side is one package, said one way (issue 23, part 5): `parity`,
with the PyTorch side as `parity.torch`; one version source; no test
fixtures in the wheel; no parameter that shadows a module."""

import ast
import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "parity"
MODULE_NAMES = {"torch", "numpy", "np", "onnx", "os", "json", "sys", "parity"}


def test_the_wheel_ships_one_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["scikit-build"]["wheel"]["packages"] == ["python/parity"]
    assert not (ROOT / "python" / "parity_torch").exists()
    assert (PACKAGE / "torch" / "__main__.py").is_file()  # python -m parity.torch


def test_no_test_fixture_is_inside_the_package():
    names = {p.name for p in PACKAGE.rglob("*.py")}
    assert not names & {"models.py", "zoo.py", "zoo_models.py", "cache.py"}, names


def test_one_version_source():
    # CMakeLists.txt's project(parity VERSION ...): pyproject reads it, the extension compiles it in.
    assert re.search(r"project\(parity VERSION [0-9.]+", (ROOT / "CMakeLists.txt").read_text())
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "python").rglob("*.py")
            if re.search(r"^\s*__version__\s*=\s*['\"]", p.read_text(), re.M)]
    assert not hits, f"a second version source: {hits}"


def test_no_parameter_shadows_a_module():
    hits = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                for arg in a.posonlyargs + a.args + a.kwonlyargs:
                    if arg.arg in MODULE_NAMES:
                        hits.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}({arg.arg}=)")
    assert not hits, "parameters named like a module:\n" + "\n".join(hits)


def test_docs_spell_the_package_one_way():
    hits = []
    docs = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "python").rglob("*.md"),
            *(ROOT / "bench").rglob("*.md")]
    for doc in docs:
        for i, line in enumerate(doc.read_text().splitlines(), 1):
            if "parity_torch" in line:
                hits.append(f"{doc.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not hits, "spell it parity.torch (python/parity/torch):\n" + "\n".join(hits)


def test_a_plain_pip_install_compiles_everything():
    # `make python-package` links build/'s libraries and installs build/parity
    # (-C cmake.define.PARITY_PREBUILT_DIR=...); pyproject.toml passes it empty on
    # every other build, so a plain `pip install .` after make compiles all of
    # parity's C++ again instead of reusing whatever build-py/'s cache remembers.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["scikit-build"]["cmake"]["define"]["PARITY_PREBUILT_DIR"] == ""
    assert "PARITY_PREBUILT_DIR=$(abspath $(BUILD))" in (ROOT / "Makefile").read_text()
