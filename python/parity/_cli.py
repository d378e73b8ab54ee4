"""The ``parity`` command: execs the C++ binary installed beside this module."""
import os
import subprocess
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from ._core import ParityError


def binary_path() -> str:
    """The bundled ``parity`` binary (its rpath finds libonnxruntime beside it)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity")


def main() -> None:
    """Console entry point: the same CLI, same arguments, same exit codes."""
    exe = binary_path()
    os.execv(exe, [exe] + sys.argv[1:])


class ParityRuntimeError(RuntimeError):
    """ONNX Runtime failed unexpectedly (the CLI's exit code 3)."""


# What the files parity.run/check/locate write into their temporary folder
# hold, for messages: the user gave a dict, not a file.
_TEMP_FILES = {"inputs.npz": "the inputs given", "tolerance.json": "the tolerance given",
               "config.json": "the config given"}


def invoke(args: Sequence[str], tmpdir: str = "", env: Optional[Dict[str, str]] = None) -> Tuple[int, str]:
    """Runs ``parity ARGS``; returns (exit code 0 or 1, stdout).

    Exit 2 raises ParityError and exit 3 ParityRuntimeError, each with the
    CLI's one-line message (``parity: error: `` stripped). A file of tmpdir
    that the message names is named by what it holds ("the inputs given"),
    never by its temporary path. ``env``: variables added to the environment.
    """
    # The binary finds plugin EP packages (onnxruntime_ep_*) in the Python
    # environment named by VIRTUAL_ENV (docs/providers.md): this one's.
    extra = env or {}
    env = dict(os.environ)
    env.update(extra)
    env.setdefault("VIRTUAL_ENV", sys.prefix)
    proc = subprocess.run([binary_path(), *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env)
    if proc.returncode in (0, 1):
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
