"""A shared cache of exported models and their PyTorch dumps, for tests.

    PYTHONPATH=python:python/tests python -m zoo --out CACHE_DIR [--exporter dynamo,torchscript] [--only NAME,...]

For each model of zoo_models.ZOO and each exporter, CACHE_DIR/<model>/<exporter>/
holds:
  model.onnx     the export (weights inside the file)
  dump/          the PyTorch dump directory (inputs, every module's outputs,
                 outputs, fp64 outputs; manifest.json with the export record)
  inputs.npz     the dump's inputs keyed by ONNX input name (one sample,
                 for `parity check --inputs`)
  export.log     what torch printed and warned while exporting and dumping
  stamp.json     written last: {"status": "ok"|"failed", "error", "phase",
                 "seconds", versions}; an entry without it is incomplete

An entry whose stamp matches this zoo's fingerprint (parity.torch's and the zoo's
sources and the versions of torch, torchvision, transformers, timm and onnx)
and, when ok, whose model.onnx still has the sha256 its dump records, is not
rebuilt, so test runs share one cache; a change to either rebuilds it.
A failed export is an entry too: its stamp carries the exporter's one-line
message. CACHE_DIR/zoo.json sums them up.
Tests find the cache through $PARITY_TORCH_CACHE (default:
<repo>/build/torch-cache).
"""

import contextlib
import hashlib
import importlib
import json
import os
import platform
import shutil
import time

import numpy as np

from parity.torch.errors import ExportError, one_line
from parity.torch.exporter import EXPORTERS, _sha256, export
from parity.torch.quiet import captured_output
from parity.torch.tensors import save_json

from .zoo_models import ZOO, build_model

ZOO_VERSION = 1
_LOG_LIMIT = 256 * 1024


def default_cache_dir():
    """$PARITY_TORCH_CACHE, else <repo>/build/torch-cache."""
    env = os.environ.get("PARITY_TORCH_CACHE")
    if env:
        return env
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
    return os.path.join(repo, "build", "torch-cache")


def entry_dir(cache_dir, name, exporter):
    return os.path.join(cache_dir, name, exporter)


def load_stamp(cache_dir, name, exporter):
    """The entry's stamp when the entry is complete and current, else None."""
    d = entry_dir(cache_dir, name, exporter)
    try:
        with open(os.path.join(d, "stamp.json"), encoding="utf-8") as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return None
    if stamp.get("fingerprint") != fingerprint():
        return None
    if stamp.get("status") == "ok":
        try:
            with open(os.path.join(d, "dump", "manifest.json"), encoding="utf-8") as f:
                recorded = json.load(f)["export"]["onnx_sha256"]
            if not os.path.isfile(os.path.join(d, "inputs.npz")) or \
                    _sha256(os.path.join(d, "model.onnx")) != recorded:
                return None
        except (OSError, ValueError, KeyError):
            return None
    return stamp


def build(cache_dir, exporters=EXPORTERS, only=None, force=False, log=None):
    """Builds what is missing; returns the summary also written to
    CACHE_DIR/zoo.json: {"entries": {"<model>/<exporter>": stamp}, ...}.
    log(line) hears one line per entry. Never raises for a model that fails
    to build, export or dump: that is recorded in its stamp."""
    names = list(only) if only else list(ZOO)
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        raise ValueError(f"unknown zoo model '{unknown[0]}' (one of {', '.join(ZOO)})")
    bad = [e for e in exporters if e not in EXPORTERS]
    if bad:
        raise ValueError(f"unknown exporter '{bad[0]}' (one of {', '.join(EXPORTERS)})")
    os.makedirs(cache_dir, exist_ok=True)
    log = log or (lambda line: None)
    started = time.perf_counter()
    with _locked(cache_dir):  # a second build of the same cache waits, then finds it built
        for name in names:
            for exporter in exporters:
                stamp = None if force else load_stamp(cache_dir, name, exporter)
                cached = stamp is not None
                if not cached:
                    stamp = build_entry(cache_dir, name, exporter)
                log(_describe(name, exporter, stamp, cached))
        summary = summarize(cache_dir)
        summary["last_build_seconds"] = round(time.perf_counter() - started, 2)
        save_json(os.path.join(cache_dir, "zoo.json"), summary)
    return summary


@contextlib.contextmanager
def _locked(cache_dir):
    """An exclusive lock on CACHE_DIR/.lock (POSIX; elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(os.path.join(cache_dir, ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build_entry(cache_dir, name, exporter):
    """Builds one entry from scratch (whatever was there is removed); returns its stamp."""
    spec = ZOO[name]
    d = entry_dir(cache_dir, name, exporter)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    stamp = {"zoo_version": ZOO_VERSION, "fingerprint": fingerprint(), "model": name, "exporter": exporter,
             "about": spec.about, "versions": _versions(), "python_version": platform.python_version()}
    started = time.perf_counter()
    phase = "build"
    with captured_output() as log:
        try:
            model, args = build_model(spec)
            phase = "export"
            kwargs = {"input_names": list(spec.input_names), "output_names": list(spec.output_names)}
            if spec.dynamic_axes:
                kwargs["dynamic_axes"] = spec.dynamic_axes
            record = export(model, args, os.path.join(d, "model.onnx"), dump_dir=os.path.join(d, "dump"),
                            exporter=exporter, **kwargs)
            phase = "inputs"
            _write_inputs(d)
            stamp.update(status="ok", onnx_sha256=record["onnx_sha256"], opset=record["opset"])
        except ExportError as e:
            stamp.update(status="failed", phase="export", error=str(e))
        except Exception as e:  # noqa: BLE001 -- recorded, the zoo goes on
            if phase == "export":  # export() returned: the dump failed
                phase = "dump" if os.path.isfile(os.path.join(d, "model.onnx")) else "export"
            stamp.update(status="failed", phase=phase, error=one_line(e))
    stamp["seconds"] = round(time.perf_counter() - started, 2)
    with open(os.path.join(d, "export.log"), "w", encoding="utf-8") as f:
        f.write(log.text[-_LOG_LIMIT:])
    save_json(os.path.join(d, "stamp.json"), stamp)
    return stamp


def summarize(cache_dir):
    """{"zoo_version", "torch_version", "entries": {"<model>/<exporter>": stamp}} for
    every current entry in the cache."""
    entries = {}
    for name in ZOO:
        for exporter in EXPORTERS:
            stamp = load_stamp(cache_dir, name, exporter)
            if stamp is not None:
                entries[f"{name}/{exporter}"] = stamp
    return {"zoo_version": ZOO_VERSION, "fingerprint": fingerprint(), "versions": _versions(), "entries": entries}


_FINGERPRINT = None
_NOT_FINGERPRINTED = ("cli.py", "__main__.py")
_FINGERPRINTED_DIRS = ("parity.torch", "zoo")


def fingerprint():
    """sha256 over parity.torch's and the zoo's sources and the versions of what builds the zoo."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        h = hashlib.sha256(json.dumps(_versions(), sort_keys=True).encode())
        for package in _FINGERPRINTED_DIRS:
            here = os.path.dirname(os.path.abspath(importlib.import_module(package).__file__))
            # every module but the command lines, which do not change what is built
            for fname in sorted(f for f in os.listdir(here) if f.endswith(".py") and f not in _NOT_FINGERPRINTED):
                with open(os.path.join(here, fname), "rb") as f:
                    h.update(f"{package}/{fname}".encode() + b"\0" + f.read())
        _FINGERPRINT = h.hexdigest()
    return _FINGERPRINT


def _versions():
    out = {"zoo": ZOO_VERSION}
    for module in ("torch", "torchvision", "transformers", "timm", "onnx", "numpy"):
        try:
            out[module] = importlib.import_module(module).__version__
        except ImportError:
            out[module] = None
    return out


def _write_inputs(d):
    """inputs.npz from the dump: one sample, keys = ONNX input names."""
    with open(os.path.join(d, "dump", "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    arrays = {name: np.load(os.path.join(d, "dump", rel), allow_pickle=False)
              for name, rel in manifest["inputs"].items()}
    tmp = os.path.join(d, f"inputs.tmp-{os.getpid()}.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, os.path.join(d, "inputs.npz"))


def _describe(name, exporter, stamp, cached):
    what = "ok" if stamp["status"] == "ok" else f"FAILED ({stamp.get('phase')}): {stamp.get('error')}"
    when = "cached" if cached else "%.1f s" % stamp["seconds"]
    return f"{name}/{exporter}: {what} [{when}]"
