"""The real exporters' zoo's cache: CACHE_DIR/<group>/ holds a group's files
(groups.py) and stamp.json, written last: {"status": "ok"|"failed", "error",
"seconds", "facts", "fingerprint"}. A group whose stamp matches the current
fingerprint (the builders' sources, parity.torch's, and the versions of what
builds them) is not rebuilt: CI rebuilds nothing while they are unchanged.

    PYTHONPATH=python:python/tests python -m zoo_real [--out CACHE_DIR] [--only GROUP,...] [--force]

CACHE_DIR: $PARITY_ZOO_REAL_CACHE, else <repo>/build/zoo-real-cache.
"""

import contextlib
import hashlib
import importlib
import json
import os
import shutil
import time

from parity.torch.errors import one_line
from parity.torch.quiet import captured_output
from parity.torch.tensors import save_json

_NOT_FINGERPRINTED = ("cases.py", "verdicts.py", "__main__.py")  # what runs parity, not what builds
_VERSIONED = ("torch", "torchvision", "transformers", "timm", "onnx", "onnxruntime", "ultralytics", "numpy")
_LOG_LIMIT = 256 * 1024


def default_cache_dir():
    env = os.environ.get("PARITY_ZOO_REAL_CACHE")
    if env:
        return env
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
    return os.path.join(repo, "build", "zoo-real-cache")


def versions():
    out = {}
    for module in _VERSIONED:
        try:
            out[module] = importlib.import_module(module).__version__
        except ImportError:
            out[module] = None
    return out


_FINGERPRINT = None


def fingerprint():
    global _FINGERPRINT
    if _FINGERPRINT is None:
        h = hashlib.sha256(json.dumps(versions(), sort_keys=True).encode())
        for package in ("parity.torch", "zoo_real"):
            here = os.path.dirname(os.path.abspath(importlib.import_module(package).__file__))
            for fname in sorted(f for f in os.listdir(here) if f.endswith(".py") and f not in _NOT_FINGERPRINTED):
                with open(os.path.join(here, fname), "rb") as f:
                    h.update(f"{package}/{fname}".encode() + b"\0" + f.read())
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


def load_stamp(cache_dir, group):
    try:
        with open(os.path.join(cache_dir, group, "stamp.json"), encoding="utf-8") as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return None
    return stamp if stamp.get("fingerprint") == fingerprint() else None


def build(cache_dir, only=None, force=False, log=None):
    """Builds the groups that are missing or stale; returns {group: stamp}."""
    from .groups import GROUPS
    names = list(only) if only else list(GROUPS)
    unknown = [n for n in names if n not in GROUPS]
    if unknown:
        raise ValueError(f"unknown zoo_real group '{unknown[0]}' (one of {', '.join(GROUPS)})")
    os.makedirs(cache_dir, exist_ok=True)
    log = log or (lambda line: None)
    stamps = {}
    with _locked(cache_dir):
        for name in names:
            stamp = None if force else load_stamp(cache_dir, name)
            cached = stamp is not None
            if not cached:
                stamp = build_group(cache_dir, name, GROUPS[name])
            stamps[name] = stamp
            log(f"{name}: {stamp['status']}" + (f" ({stamp['error']})" if stamp.get("error") else "")
                + (" [cached]" if cached else f" [{stamp['seconds']:.1f} s]"))
    return stamps


def build_group(cache_dir, name, builder):
    d = os.path.join(cache_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    stamp = {"group": name, "fingerprint": fingerprint(), "versions": versions()}
    started = time.perf_counter()
    with captured_output() as out:
        try:
            stamp.update(status="ok", facts=builder(d))
        except Exception as e:  # noqa: BLE001 -- recorded in the stamp; the zoo goes on
            stamp.update(status="failed", error=one_line(e))
    stamp["seconds"] = round(time.perf_counter() - started, 2)
    with open(os.path.join(d, "build.log"), "w", encoding="utf-8") as f:
        f.write(out.text[-_LOG_LIMIT:])
    save_json(os.path.join(d, "stamp.json"), stamp)
    return stamp


@contextlib.contextmanager
def _locked(cache_dir):
    import fcntl
    with open(os.path.join(cache_dir, ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
