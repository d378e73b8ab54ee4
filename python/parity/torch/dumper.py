"""dump(): runs a model once with a forward hook on every module and writes
the PyTorch dump directory of docs/contract.md ("Files").

Layout of out_dir:
  input_<name>.npy            one per flattened model input
  layer_<NNNN>_<path>.npy     one per tensor a module returned, in the order
                              module forwards finished (hook order)
  module_inputs/<NNNN>_<path>.in<k>.npy
                              the tensors each module call received (its
                              positional arguments, flattened), listed under
                              the call's layers as "inputs" (module_inputs=
                              False: none); parity uses them to tell a module's
                              own error from an error in the ops before it
  output_<name>.npy           one per flattened model output
  fp64/output_<name>.npy      the same outputs from a float64 copy (fp64=False: none)
  sizes/<sample>/input_*.npy, output_*.npy, fp64/output_*.npy
                              the same model at other input sizes (sizes=; the
                              manifest's "sizes"): outputs only, no layers
  manifest.json               written last; its presence means the dump is whole
"""

import contextlib
import copy
import glob
import os
import platform
import shutil
import tempfile
import warnings

import numpy as np
import torch

from .._version import version as parity_version
from .control_flow import capturing, eager_cond
from .errors import one_line
from .flatten import flatten, is_single_tensor
from .signature import input_names_for, split_args
from .tensors import sanitize, save_json, save_npy, stats, to_numpy

SCHEMA = "parity.torch_dump/1"

# Modules whose eval-mode "fast path" (one fused kernel in torch >= 1.12)
# bypasses their submodules and is not what the ONNX exporters trace.
_FASTPATH_TYPES = tuple(
    getattr(torch.nn, n) for n in
    ("TransformerEncoderLayer", "TransformerDecoderLayer", "MultiheadAttention")
    if hasattr(torch.nn, n))


def dump(model, args, out_dir, output_names=None, input_names=None,
         fp64=True, export_info=None, seed=0, fastpath=False, module_inputs=True, sizes=None, generation=None,
         force=False):
    """Runs model(*args) once in eval mode and writes the dump directory.

    args: a tensor, or a tuple of positional arguments whose last element may
    be a dict of keyword arguments (torch.onnx.export's convention).
    output_names / input_names: the ONNX names to file the flattened outputs /
    inputs under (defaults: output_0, ...; the forward signature's names).
    fp64: also write fp64/output_<name>.npy from a float64 copy of the model
    (the manifest's outputs_fp64; on by default). When the float64 copy
    fails to run, the dump is still written, without outputs_fp64, and the
    manifest's outputs_fp64_error says why (a warning too).
    export_info: a record from export(), stored as the manifest's "export".
    seed: torch's RNG seed during the run (the caller's RNG state is kept).
    fastpath: allow the fused transformer fast path; off by default so that
    every submodule runs (and is dumped) as the exporter traced it.
    sizes: [(sample name, args)] of the same model at other input sizes
    (sizes.py picks them from an export's dynamic axes); each is run too and
    written under sizes/<name>/ with its outputs (and fp64 outputs), listed in
    the manifest's "sizes". A size the model raises on is left out, named in
    "sizes_refused" with the error (a warning too).
    generation: a callable(write) -> dict (generate.prepare) run after the
    rest, its dict the manifest's "generation"; write(fname, tensor) writes
    one file into the dump and returns its entry.

    force: replace a dump that out_dir already holds; without it such a
    out_dir raises FileExistsError before anything runs, as the command
    line refuses -o DIR without --force.

    Returns the manifest (a dict). The model's train/eval flags, torch's
    RNG state and deterministic-algorithms setting are restored afterwards.
    The dump is written into a new folder beside out_dir and moved into
    place once whole: when anything raises (the model's forward, a tensor
    that cannot be saved), it is removed, and no folder is created; a
    previous dump in out_dir loses its manifest (it reads as incomplete).
    """
    refuse_existing_dump(out_dir, force)
    with _staged(out_dir) as staging:
        return _dump_into(staging, model, args, output_names, input_names, fp64, export_info, seed, fastpath,
                          module_inputs, sizes, generation)


def refuse_existing_dump(out_dir, force):
    """Raises FileExistsError when out_dir holds a dump (its manifest.json)
    and force is false: a dump is replaced only on request (issue 54)."""
    if not force and os.path.exists(os.path.join(out_dir, "manifest.json")):
        raise FileExistsError(f"{out_dir}: already holds a dump (manifest.json); pass force=True to replace it")


@contextlib.contextmanager
def _staged(out_dir):
    """A fresh folder beside out_dir to write the dump into; moved to out_dir
    when the block ends normally, removed when it raises (then a previous
    dump in out_dir loses its manifest: it was to be replaced, and reads as
    incomplete). Files of out_dir that are not a dump's (an .onnx file
    exported there) are kept; a previous dump's files are replaced, its
    manifest first (a half-replaced dump reads as incomplete)."""
    out_dir = os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.", suffix=".partial", dir=parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # as os.makedirs would have made it, not mkdtemp's 0700
    try:
        try:
            yield staging
        except BaseException:
            # A dump asked to replace another invalidates it even when it fails.
            if os.path.exists(os.path.join(out_dir, "manifest.json")):
                os.remove(os.path.join(out_dir, "manifest.json"))
            raise
        if not os.path.isdir(out_dir):
            os.rename(staging, out_dir)
            return
        manifest = os.path.join(out_dir, "manifest.json")
        if os.path.exists(manifest):
            os.remove(manifest)
        _remove_stale(out_dir, set())
        files = [os.path.relpath(os.path.join(d, f), staging) for d, _, names in os.walk(staging) for f in names]
        for rel in sorted(files, key=lambda r: (r == "manifest.json", r)):  # the manifest last
            os.makedirs(os.path.dirname(os.path.join(out_dir, rel)), exist_ok=True)
            os.replace(os.path.join(staging, rel), os.path.join(out_dir, rel))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _dump_into(out_dir, model, args, output_names, input_names, fp64, export_info, seed, fastpath,
               module_inputs, sizes, generation=None):
    """dump() into the empty folder out_dir; returns the manifest."""
    manifest_path = os.path.join(out_dir, "manifest.json")
    pos_args, kw_args = split_args(args)
    written = set()

    names = input_names_for(model, pos_args, kw_args, input_names)
    inputs, input_details = _write_named(out_dir, "input", names, flatten((pos_args, kw_args)), written)

    recorder = _LayerRecorder(model, out_dir, written, module_inputs)
    slow = not fastpath and any(isinstance(m, _FASTPATH_TYPES) for m in model.modules())
    with _run_context(model, seed, slow) as run_info:
        with recorder, eager_cond():
            result = model(*pos_args, **kw_args)
    out_tensors = flatten(result)

    out_names = _output_names(output_names, len(out_tensors))
    outputs, output_details = _write_named(out_dir, "output", out_names, out_tensors, written)

    manifest = {
        "schema": SCHEMA,
        "torch_version": torch.__version__,
        "parity_version": parity_version(),
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
        "model_type": type(model).__name__,
        "device": _device_of(model, pos_args),
        "seed": seed,
        **run_info,
        "inputs": inputs,
        "outputs": outputs,
        "input_details": input_details,
        "output_details": output_details,
        "layers": recorder.layers,
    }
    if fp64:
        manifest.update(_try_fp64(model, pos_args, kw_args, out_names, out_dir, seed, slow, written))
    if sizes:
        manifest.update(_dump_sizes(model, sizes, names, out_names, out_dir, seed, slow, written, fp64))
    if export_info is not None:
        manifest["export"] = export_info
    if generation is not None:
        os.makedirs(os.path.join(out_dir, "generate"), exist_ok=True)
        with _run_context(model, seed, slow):
            manifest["generation"] = generation(lambda fname, t: _write(out_dir, fname, t, written))
    _remove_stale(out_dir, written)  # what a failed fp64 run left
    save_json(manifest_path, manifest)
    return manifest


def _write_named(out_dir, prefix, names, tensors, written):
    """Writes <prefix>_<name>.npy per tensor; returns ({name: file}, [details])."""
    files, details = {}, []
    for name, tensor in zip(names, tensors):
        entry = _write(out_dir, f"{prefix}_{sanitize(name)}.npy", tensor, written)
        files[name] = entry["file"]
        details.append(dict(name=name, **entry))
    return files, details


def _try_fp64(model, pos_args, kw_args, out_names, out_dir, seed, slow, written):
    """The manifest entries of the float64 run: outputs_fp64, or outputs_fp64_error.

    On by default: parity calibrates each output's tolerance on the
    float32-vs-float64 error of PyTorch itself. A model that cannot run in
    float64 (an op without a double kernel) is still dumped; the manifest
    says why there is no calibration.
    """
    try:
        return {"outputs_fp64": _dump_fp64(model, pos_args, kw_args, out_names,
                                           out_dir, seed, slow, written)}
    except Exception as e:  # noqa: BLE001 -- any failure of the copy: dump without it
        written.difference_update({f for f in written if f.startswith("fp64/")})
        error = one_line(e)
        warnings.warn(f"parity.torch.dump: no fp64 outputs: {error}")
        return {"outputs_fp64_error": error}


def _dump_sizes(model, sizes, in_names, out_names, out_dir, seed, slow, written, fp64):
    """The manifest's "sizes" (and "sizes_refused"): each sample run without
    hooks, its inputs, outputs and fp64 outputs under sizes/<name>/."""
    entries, refused = [], []
    for name, args in sizes:
        base = f"sizes/{sanitize(name)}"
        pos_args, kw_args = split_args(args)
        try:
            with _run_context(model, seed, slow):
                result = model(*pos_args, **kw_args)
        except Exception as e:  # noqa: BLE001 -- a size the model does not take
            refused.append({"name": name, "error": one_line(e)})
            warnings.warn(f"parity.torch.dump: size '{name}' left out: {one_line(e)}")
            continue
        os.makedirs(os.path.join(out_dir, base), exist_ok=True)
        inputs, input_details = _write_named(out_dir, f"{base}/input", in_names,
                                             flatten((pos_args, kw_args)), written)
        outputs, output_details = _write_named(out_dir, f"{base}/output", out_names, flatten(result), written)
        entry = {"name": name, "inputs": inputs, "outputs": outputs,
                 "input_details": input_details, "output_details": output_details}
        if fp64:
            fp = _try_fp64(model, pos_args, kw_args, out_names, os.path.join(out_dir, base), seed, slow, set())
            if "outputs_fp64" in fp:
                fp["outputs_fp64"] = {k: f"{base}/{v}" for k, v in fp["outputs_fp64"].items()}
                written.update(fp["outputs_fp64"].values())
            entry.update(fp)
        entries.append(entry)
    out = {"sizes": entries}
    if refused:
        out["sizes_refused"] = refused
    return out


class _LayerRecorder:
    """Forward hooks on every module but the root, writing each output at once.

    Outputs are copied inside the hook: an in-place module later in the
    network (ReLU(inplace=True)) would otherwise overwrite what was recorded.
    """

    def __init__(self, model, out_dir, written, module_inputs=True):
        self.model, self.out_dir, self.written = model, out_dir, written
        self.layers, self.calls, self.order, self.handles = [], {}, 0, []
        self.module_inputs = module_inputs
        self.pre_calls, self.pending, self.started = {}, {}, 0

    def __enter__(self):
        for path, module in self.model.named_modules():
            if module is self.model:
                continue
            is_leaf = next(module.children(), None) is None
            if self.module_inputs:
                self.handles.append(module.register_forward_pre_hook(
                    lambda m, i, path=path: self._pre_hook(path, i)))
            self.handles.append(module.register_forward_hook(
                lambda m, i, o, path=path, is_leaf=is_leaf: self._hook(m, path, is_leaf, o)))
        return self

    def _pre_hook(self, path, args):
        """Writes the call's tensor arguments before the call runs (an in-place
        module would change them). Nothing while torch captures a graph
        (control_flow.py): no values then, and a side effect breaks it."""
        if capturing(flatten(args)):
            return
        call = self.pre_calls.get(path, 0)
        self.pre_calls[path] = call + 1
        entries = []
        for k, tensor in enumerate(flatten(args)):
            fname = os.path.join("module_inputs", f"{self.started:04d}_{sanitize(path)}"
                                 f"{f'.call{call}' if call else ''}.in{k}.npy")
            os.makedirs(os.path.join(self.out_dir, "module_inputs"), exist_ok=True)
            entry = _write(self.out_dir, fname, tensor, self.written)
            entries.append({"file": entry["file"], "index": k, "dtype": entry["dtype"], "shape": entry["shape"]})
        self.started += 1
        self.pending[(path, call)] = entries

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles = []

    def _hook(self, module, path, is_leaf, output):
        tensors = flatten(output)
        if capturing(tensors):
            return
        call = self.calls.get(path, 0)
        self.calls[path] = call + 1
        single = is_single_tensor(output)
        for k, tensor in enumerate(tensors):
            suffix = (f".call{call}" if call else "") + ("" if single else f".out{k}")
            fname = f"layer_{len(self.layers):04d}_{sanitize(path)}{suffix}.npy"
            entry = _write(self.out_dir, fname, tensor, self.written)
            self.layers.append({
                "file": entry.pop("file"), "module": path, "type": type(module).__name__,
                "call": call, "output_index": None if single else k,
                "order": self.order, "is_leaf": is_leaf, **entry})
            if (path, call) in self.pending:
                self.layers[-1]["inputs"] = self.pending[(path, call)]
        self.pending.pop((path, call), None)
        self.order += 1


def _write(out_dir, fname, tensor, written):
    """Saves one tensor; returns its manifest entry {file, dtype, shape, stats...}."""
    array, dtype = to_numpy(tensor)
    rel = fname.replace(os.sep, "/")
    save_npy(os.path.join(out_dir, fname), array)
    written.add(rel)
    return {"file": rel, "dtype": dtype, "shape": list(tensor.shape), **stats(tensor)}


def _output_names(given, count):
    names = list(given or [])
    return names[:count] + [f"output_{i}" for i in range(len(names), count)]


@contextlib.contextmanager
def fastpath_disabled(model, slow=None):
    """Switches torch's fused transformer fast path off while inside, when the
    model has a module that takes it (or slow is True), so that submodules run
    as the exporters trace them. Yields False when it was switched off (or no
    module takes it), True when it stays on. torch < 2.1 has no switch: there
    its fast path is skipped when grad is enabled, so grad is enabled instead;
    the caller sees that in grad_enabled()."""
    if slow is None:
        slow = any(isinstance(m, _FASTPATH_TYPES) for m in model.modules())
    mha = getattr(getattr(torch.backends, "mha", None), "set_fastpath_enabled", None)
    if not slow:
        yield True
    elif mha is not None:
        before = torch.backends.mha.get_fastpath_enabled()
        mha(False)
        try:
            yield False
        finally:
            mha(before)
    else:
        with torch.enable_grad():
            yield False


@contextlib.contextmanager
def eval_mode(model):
    """model.eval() while inside; every module's training flag restored after."""
    modes = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        yield model
    finally:
        for m, training in modes:
            m.training = training


@contextlib.contextmanager
def _run_context(model, seed, slow):
    """eval mode, deterministic algorithms, a fixed seed, no grad (unless the
    fast path can only be avoided with grad); all restored after."""
    det = torch.are_deterministic_algorithms_enabled()
    warn_only = (torch.is_deterministic_algorithms_warn_only_enabled()
                 if hasattr(torch, "is_deterministic_algorithms_warn_only_enabled") else False)
    try:
        with eval_mode(model), torch.random.fork_rng(devices=[]), torch.no_grad():
            _set_deterministic(True, True)
            with fastpath_disabled(model, slow) as fast:
                torch.manual_seed(seed)
                yield {"deterministic": True, "fastpath": fast,
                       "grad_enabled": torch.is_grad_enabled()}
    finally:
        _set_deterministic(det, warn_only)


def _set_deterministic(on, warn_only):
    try:
        torch.use_deterministic_algorithms(on, warn_only=warn_only)
    except TypeError:  # torch < 1.11: no warn_only
        torch.use_deterministic_algorithms(on)


def _dump_fp64(model, pos_args, kw_args, out_names, out_dir, seed, slow, written):
    """Runs a float64 copy of the model on float64 inputs; writes fp64/output_*.npy."""
    os.makedirs(os.path.join(out_dir, "fp64"), exist_ok=True)
    model64 = copy.deepcopy(model).double()

    def cast(v):
        if isinstance(v, torch.Tensor):
            return v.double() if v.is_floating_point() else v
        if isinstance(v, (list, tuple)):
            return type(v)(cast(x) for x in v) if not hasattr(v, "_fields") else type(v)(*map(cast, v))
        if isinstance(v, dict):
            return {k: cast(x) for k, x in v.items()}
        return v

    with _run_context(model64, seed, slow):
        result = model64(*cast(pos_args), **cast(kw_args))
    files = {}
    for name, tensor in zip(out_names, flatten(result)):
        entry = _write(out_dir, os.path.join("fp64", f"output_{sanitize(name)}.npy"), tensor, written)
        files[name] = entry["file"]
    return files


def _device_of(model, pos_args):
    for p in model.parameters():
        return str(p.device)
    for t in flatten(pos_args):
        return str(t.device)
    return "cpu"


def _remove_stale(out_dir, written):
    """Deletes the dump files in out_dir that are not in `written`."""
    for pattern in ("layer_*.npy", "input_*.npy", "output_*.npy", "fp64/output_*.npy", "module_inputs/*.npy",
                    "sizes/*/*.npy", "sizes/*/fp64/*.npy", "generate/*.npy"):
        for path in glob.glob(os.path.join(out_dir, pattern)):
            rel = os.path.relpath(path, out_dir).replace(os.sep, "/")
            if rel not in written:
                os.remove(path)
