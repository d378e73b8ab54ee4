"""python/README.md's code blocks run as written (issue 54), each in a fresh
folder: its first block, run as written, used to replace its own dump (the
command line refuses the same without --force). The "Tests" block runs this
suite itself and is not run here."""

import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "README.md")


def blocks(lang):
    text = open(README, encoding="utf-8").read()
    return re.findall(r"```" + lang + r"\n(.*?)```", text, re.S)


def test_the_python_block_runs_as_written_and_keeps_its_dumps(tmp_path, monkeypatch):
    (code,) = blocks("python")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "python/README.md", "exec"), {})
    for folder in ("dump", "dump-only"):
        assert (tmp_path / folder / "manifest.json").is_file(), folder
    import json
    assert "export" in json.loads((tmp_path / "dump" / "manifest.json").read_text())  # not replaced by the 2nd
    # Run again in the same folder: the API refuses an existing dump, as -o does.
    with pytest.raises(FileExistsError, match="already holds a dump.*force=True"):
        exec(compile(code, "python/README.md", "exec"), {})


def test_the_command_line_block_runs_as_written(tmp_path):
    (commands,) = [b for b in blocks("sh") if "parity.torch dump" in b and "pytest" not in b]
    # The block's `mymodels:decode_step` is the reader's own module: here a decode step of the zoo's.
    (tmp_path / "mymodels.py").write_text("from zoo.decode import DecodeStep\n\n\ndef decode_step():\n"
                                          "    return DecodeStep()\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # a symlink would leave the venv
    (bin_dir / "python").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(tmp_path), HERE, os.path.join(HERE, ".."),
                                           os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", commands], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for folder in ("dump", "dump-mobilenet", "dump-decode"):
        assert (tmp_path / folder / "manifest.json").is_file(), folder
    assert (tmp_path / "resnet18.onnx").is_file()
    again = subprocess.run(["bash", "-c", commands.split("\npython")[0]], cwd=tmp_path, env=env,
                           capture_output=True, text=True)
    assert again.returncode == 2 and "already holds a dump" in again.stderr, again.stderr
