"""The ``parity`` command: execs the C++ binary installed beside this module."""
import glob
import importlib.util
import os
import subprocess
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from ._native import ParityError


def binary_path() -> str:
    """The bundled ``parity`` binary (its rpath finds the bundled libonnxruntime beside it)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity")


def wheel_ort_library() -> Optional[str]:
    """The libonnxruntime of the environment's ``onnxruntime`` (or ``onnxruntime-gpu``:
    both install the package ``onnxruntime``) wheel, found without importing it;
    None when no such wheel is importable (docs/providers.md, "Which ONNX Runtime")."""
    try:
        spec = importlib.util.find_spec("onnxruntime")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        libs = sorted(glob.glob(os.path.join(folder, "capi", "libonnxruntime.so.*")))
        if libs:
            return libs[-1]
    return None


def binary_environ() -> Dict[str, str]:
    """The environment the bundled binary runs in: this Python environment's.

    Its plugin EP packages (onnxruntime_ep_*) are found under VIRTUAL_ENV; its
    onnxruntime wheel's library is the ORT that runs (PARITY_ORT_LIBRARY),
    unless PARITY_ORT_LIBRARY is set already; without a wheel, parity's own.
    """
    env = dict(os.environ)
    env.setdefault("VIRTUAL_ENV", sys.prefix)
    if not env.get("PARITY_ORT_LIBRARY"):
        lib = wheel_ort_library()
        if lib:
            env["PARITY_ORT_LIBRARY"] = lib
    return env


def main() -> None:
    """Console entry point: the same CLI, same arguments, same exit codes."""
    exe = binary_path()
    os.execve(exe, [exe] + sys.argv[1:], binary_environ())


class ParityRuntimeError(RuntimeError):
    """ONNX Runtime failed unexpectedly (the CLI's exit code 3)."""


# What the files parity.run/check/locate write into their temporary folder
# hold, for messages: the user gave a dict, not a file.
_TEMP_FILES = {"inputs.npz": "the inputs given", "tolerance.json": "the tolerance given",
               "config.json": "the config given"}


def invoke(args: Sequence[str], tmpdir: str = "", env: Optional[Dict[str, str]] = None) -> Tuple[int, str]:
    """Runs ``parity ARGS``; returns (exit code 0, 1 or 4, stdout): 4 is a
    check NOT JUDGED (its report says what was missing).

    Exit 2 raises ParityError and exit 3 ParityRuntimeError, each with the
    CLI's one-line message (``parity: error: `` stripped). A file of tmpdir
    that the message names is named by what it holds ("the inputs given"),
    never by its temporary path. ``env``: variables added to the environment.
    """
    extra = env or {}
    env = binary_environ()
    env.update(extra)
    proc = subprocess.run([binary_path(), *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode in (0, 1, 4):
        return proc.returncode, proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    line = lines[-1] if lines else f"parity exited with code {proc.returncode}"
    for prefix in ("parity: error: ", "parity: "):
        if line.startswith(prefix):
            line = line[len(prefix):]
            break
    if tmpdir:
        for name, what in _TEMP_FILES.items():
            line = line.replace(os.path.join(tmpdir, name), what)
        line = line.replace(tmpdir + os.sep, "").replace(tmpdir, "a temporary folder")
    if proc.returncode == 2:
        raise ParityError(line)
    raise ParityRuntimeError(line)


def config_args(config, tmpdir: str, flag_level: str = "--opt") -> List[str]:
    """A config as CLI flags: a level name, a JSON file path, or a dict (docs/config.md)."""
    import json
    if config is None:
        return []
    if isinstance(config, dict):
        path = os.path.join(tmpdir, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        return ["--config", path]
    config = str(config)
    if config in ("disable", "basic", "extended", "all"):
        return [flag_level, config]
    return ["--config", config]
