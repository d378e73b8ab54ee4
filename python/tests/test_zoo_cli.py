"""The test zoo's command line, `python3 -m zoo` (python/tests/zoo/__main__.py):
it builds the shared cache of exports and dumps that test_zoo.py and
test_alignment_zoo.py read."""

import os

import pytest

from conftest import run_module


def run(*argv):
    return run_module("zoo", *argv)


@pytest.mark.parametrize("argv, needle", [
    (["--only", "no_such_model", "--out", "X"], "unknown zoo model"),
    (["--exporter", "jit", "--out", "X"], "unknown exporter"),
])
def test_bad_usage_exits_2(argv, needle):
    r = run(*argv)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr


def test_zoo_builds_then_reuses_its_cache(tmp_dir):
    r = run("--out", tmp_dir, "--only", "tuple_twice", "--exporter", "torchscript")
    assert r.returncode == 0, r.stderr
    entry = os.path.join(tmp_dir, "tuple_twice", "torchscript")
    for f in ("model.onnx", "dump/manifest.json", "inputs.npz", "stamp.json", "export.log"):
        assert os.path.isfile(os.path.join(entry, f)), f
    assert "1 of 1 exported" in r.stdout
    again = run("--out", tmp_dir, "--only", "tuple_twice", "--exporter", "torchscript")
    assert again.returncode == 0 and "[cached]" in again.stdout, again.stdout
    listed = run("--list")
    assert listed.returncode == 0 and "resnet18:" in listed.stdout


def test_zoo_names_the_same_exporters_as_export():
    from parity.torch import exporter
    from zoo import __main__ as zoo_main
    assert zoo_main.EXPORTERS == exporter.EXPORTERS
