"""House rules that a code read checks, enforced: no function longer than 80 lines.

Lengths are lizard's (pinned in python/requirements.txt): the lines from a
function's first line to its last, comments and docstrings included, the
figure `lizard -L 80` reports.
"""

import os
import pathlib

import lizard

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_LINES = 80
CPP_DIRS = ("src", "bench", "fuzz", "tests")
CPP_SUFFIXES = {".cc", ".h", ".cpp", ".hpp"}
PYTHON_DIRS = ("python", "bench", "scripts")

# (path, function name) -> why it may be longer. Keep this list at one entry.
EXEMPT = {
    ("src/compare/metrics_f32_impl.h", "F32Block"):
        "the SIMD kernel: one pass over a block of float32 keeps its accumulators, bounds and screens in "
        "vector registers (AVX2 / AVX-512VL); split into calls, they would spill or lean on inlining",
}


def _source_files(dirs, suffixes):
    for top in dirs:
        for root, subdirs, files in os.walk(ROOT / top):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith((".", "__pycache__", "build")))
            for name in sorted(files):
                if pathlib.Path(name).suffix in suffixes:
                    yield pathlib.Path(root, name)


def _long_functions(dirs, suffixes):
    long = []
    for path in _source_files(dirs, suffixes):
        rel = path.relative_to(ROOT).as_posix()
        for f in lizard.analyze_file(str(path)).function_list:
            short = f.name.split("::")[-1].split(".")[-1]
            if f.length > MAX_LINES and (rel, short) not in EXEMPT:
                long.append(f"{rel}:{f.start_line}: {f.name} has {f.length} lines")
    return long


def test_no_cpp_function_is_longer_than_80_lines():
    long = _long_functions(CPP_DIRS, CPP_SUFFIXES)
    assert not long, f"C++ functions over {MAX_LINES} lines (split them by the jobs they do):\n" + "\n".join(long)


def test_no_python_function_is_longer_than_80_lines():
    long = _long_functions(PYTHON_DIRS, {".py"})
    assert not long, f"Python functions over {MAX_LINES} lines (split them by the jobs they do):\n" + "\n".join(long)


def test_the_exemption_still_names_a_long_function():
    # An exemption outliving its reason would hide the next long function of that name.
    for (rel, name), why in EXEMPT.items():
        lengths = [f.length for f in lizard.analyze_file(str(ROOT / rel)).function_list
                   if f.name.split("::")[-1] == name]
        assert lengths and max(lengths) > MAX_LINES, f"{rel}: {name} ({why}) is no longer over {MAX_LINES} lines"
