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

import copy
import os
import platform
import warnings

import numpy as np
import torch

from .._version import version as parity_version
from .control_flow import eager_cond
from .dump_folder import refuse_existing_dump, remove_stale, staged
from .errors import one_line
from .flatten import flatten
from .layer_recorder import LayerRecorder
from .run_context import FASTPATH_TYPES, run_context
from .signature import input_names_for, split_args
from .tensors import sanitize, save_json, write_tensor

SCHEMA = "parity.torch_dump/1"


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
    with staged(out_dir) as staging:
        return _dump_into(staging, model, args, output_names, input_names, fp64, export_info, seed, fastpath,
                          module_inputs, sizes, generation)


def _dump_into(out_dir, model, args, output_names, input_names, fp64, export_info, seed, fastpath,
               module_inputs, sizes, generation=None):
    """dump() into the empty folder out_dir; returns the manifest."""
    manifest_path = os.path.join(out_dir, "manifest.json")
    pos_args, kw_args = split_args(args)
    written = set()

    names = input_names_for(model, pos_args, kw_args, input_names)
    inputs, input_details = _write_named(out_dir, "input", names, flatten((pos_args, kw_args)), written)

    recorder = LayerRecorder(model, out_dir, written, module_inputs)
    slow = not fastpath and any(isinstance(m, FASTPATH_TYPES) for m in model.modules())
    with run_context(model, seed, slow) as run_info:
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
        with run_context(model, seed, slow):
            manifest["generation"] = generation(lambda fname, t: write_tensor(out_dir, fname, t, written))
    remove_stale(out_dir, written)  # what a failed fp64 run left
    save_json(manifest_path, manifest)
    return manifest


def _write_named(out_dir, prefix, names, tensors, written):
    """Writes <prefix>_<name>.npy per tensor; returns ({name: file}, [details])."""
    files, details = {}, []
    for name, tensor in zip(names, tensors):
        entry = write_tensor(out_dir, f"{prefix}_{sanitize(name)}.npy", tensor, written)
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
            with run_context(model, seed, slow):
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


def _output_names(given, count):
    names = list(given or [])
    return names[:count] + [f"output_{i}" for i in range(len(names), count)]


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

    with run_context(model64, seed, slow):
        result = model64(*cast(pos_args), **cast(kw_args))
    files = {}
    for name, tensor in zip(out_names, flatten(result)):
        entry = write_tensor(out_dir, os.path.join("fp64", f"output_{sanitize(name)}.npy"), tensor, written)
        files[name] = entry["file"]
    return files


def _device_of(model, pos_args):
    for p in model.parameters():
        return str(p.device)
    for t in flatten(pos_args):
        return str(t.device)
    return "cpu"
