"""No source file is longer than 400 lines (docs/STYLE: "Over ~400 lines,
split"; issue 55 item 6).

The rule covers every source file of the repository: the product (src/,
python/parity), its tests (src/**/*_test.cc, python/tests, tests/), the
benchmarks, the fuzz targets and the scripts. Tests are held to the same
limit: a test file over 400 lines tests more than one thing, and none is
near it today. Data and prose (JSON, ONNX, Markdown) do not count.
A failure names each file and its count; split a file along its jobs, one
noun per file, not into halves.
"""

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 400
SOURCE_DIRS = ("src", "python", "bench", "fuzz", "tests", "scripts")
SOURCE_SUFFIXES = {".cc", ".h", ".cpp", ".hpp", ".py", ".sh", ".js", ".css", ".html", ".cmake"}


def _generated(folder):
    """Build trees, caches and hidden folders: nothing anyone writes by hand."""
    return folder.startswith(".") or folder == "__pycache__" or folder == "build" or folder.startswith("build-")


def source_files(root=ROOT, dirs=SOURCE_DIRS):
    """Every source file under `dirs` of `root`, as (path, path relative to root)."""
    for top in dirs:
        for folder, subdirs, files in os.walk(root / top):
            subdirs[:] = sorted(d for d in subdirs if not _generated(d))
            for name in sorted(files):
                path = pathlib.Path(folder, name)
                if path.suffix in SOURCE_SUFFIXES:
                    yield path, path.relative_to(root).as_posix()


def line_count(path):
    """Lines as an editor shows them: a last line without a newline counts."""
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def too_long(files, limit=MAX_FILE_LINES):
    return [f"{rel}: {n} lines" for path, rel in files if (n := line_count(path)) > limit]


def test_no_source_file_is_longer_than_400_lines():
    over = too_long(source_files())
    assert not over, (f"source files over {MAX_FILE_LINES} lines (split each along its jobs, one noun a "
                      "file):\n" + "\n".join(over))


def test_the_count_names_a_long_file_and_passes_a_short_one(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "long.cc").write_text("x;\n" * 401)
    (tmp_path / "src" / "at_limit.py").write_text("x = 1\n" * 400)
    (tmp_path / "src" / "no_newline.h").write_text("x;\n" * 400 + "y;")  # 401 lines, the last unterminated
    (tmp_path / "src" / "data.json").write_text("[]\n" * 1000)  # data, not source
    (tmp_path / "src" / "__pycache__").mkdir()
    (tmp_path / "src" / "__pycache__" / "cached.py").write_text("x = 1\n" * 1000)  # not written by hand
    files = list(source_files(tmp_path, ("src",)))
    assert sorted(rel for _, rel in files) == ["src/at_limit.py", "src/long.cc", "src/no_newline.h"]
    assert too_long(files) == ["src/long.cc: 401 lines", "src/no_newline.h: 401 lines"]


def test_the_walk_sees_every_kind_of_source():
    # Not vacuous: the product, its tests, benchmarks and fuzz targets are all walked.
    seen = {rel for _, rel in source_files()}
    for expected in ("src/engine/inputs/sample_gen.cc", "src/engine/torch/torch_dump.h",
                     "python/parity/torch/dumper.py", "python/tests/test_dump.py", "tests/house/test_file_sizes.py"):
        assert expected in seen, expected
    for top in ("bench/", "fuzz/", "scripts/", "tests/e2e/"):
        assert any(rel.startswith(top) for rel in seen), top
    assert not any(_generated(part) for rel in seen for part in rel.split("/")[:-1])
