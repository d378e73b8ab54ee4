"""parity.run / check / locate: the CLI's commands, numpy in and Report out.

Each call runs the bundled ``parity`` binary (the same engine and ORT the CLI
uses; ``parity.binary()``) with ``--json`` and reads its report, so the
numbers are the CLI's by construction. Arrays go in through an ``.npz`` in a
temporary folder.
"""
import json
import os
import tempfile
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from ._cli import ParityRuntimeError, config_args, invoke
from .report import Report

__all__ = ["run", "check", "locate", "env", "ParityRuntimeError"]

PathLike = Union[str, "os.PathLike[str]"]
Inputs = Union[None, PathLike, Mapping[str, Any]]
Config = Union[None, str, Mapping[str, Any]]


def _inputs_args(inputs: Inputs, tmp: str) -> Sequence[str]:
    if inputs is None:
        return []
    if isinstance(inputs, (str, os.PathLike)):
        return ["--inputs", os.fspath(inputs)]
    path = os.path.join(tmp, "inputs.npz")
    np.savez(path, **{k: _numpy(v) for k, v in inputs.items()})
    return ["--inputs", path]


def _numpy(v: Any) -> np.ndarray:
    if hasattr(v, "detach") and hasattr(v, "numpy"):
        v = v.detach().cpu().numpy()
    return np.asarray(v)


def _tolerance_args(tolerance: Union[None, float, Mapping[str, Any]], tmp: str) -> Sequence[str]:
    if tolerance is None:
        return []
    if isinstance(tolerance, Mapping):
        path = os.path.join(tmp, "tolerance.json")
        with open(path, "w") as f:
            json.dump(dict(tolerance), f)
        return ["--tolerance", path]
    return ["--atol", repr(float(tolerance))]


def env(runtimes: Sequence[PathLike] = ()) -> Dict[str, Any]:
    """The facts ``parity env --json`` reports, as a dict: parity's and ONNX Runtime's
    versions, ``ort_library`` (the libonnxruntime file that runs: this environment's
    onnxruntime wheel's when one is importable, else parity's own), ``ort_origin``,
    the execution providers and EP devices, CPU and OS (docs/env.schema.json).
    runtimes: further libonnxruntime files (``parity env --runtime PATH``); each is
    listed under ``runtimes`` as {"version", "library", "origin"}, read by a child
    process that loads it.
    """
    with tempfile.TemporaryDirectory(prefix="parity-env-") as tmp:
        out = os.path.join(tmp, "env.json")
        args = ["env", "--json", out]
        for lib in runtimes:
            args += ["--runtime", os.fspath(lib)]
        invoke(args, tmp)
        with open(out, encoding="utf-8") as f:
            return json.load(f)["env"]


def run(model: PathLike, inputs: Inputs, config: Config = "all", *, all_tensors: bool = False) -> Dict[str, np.ndarray]:
    """Runs ``model`` once under ``config`` (``parity run``); returns {name: array}.

    inputs: {name: array} (numpy or torch) or a tensor file (.npz, .npy, dir).
    config: a level ("disable", "basic", "extended", "all"), a config JSON path,
    or a dict in docs/config.md's JSON form. all_tensors: also every intermediate.
    Raises ParityError (bad input, the CLI's one-line message) or ParityRuntimeError.
    """
    with tempfile.TemporaryDirectory(prefix="parity-run-") as tmp:
        out = os.path.join(tmp, "outputs.npz")
        args = ["run", os.fspath(model), *_inputs_args(inputs, tmp), "-o", out, *config_args(config, tmp)]
        if all_tensors:
            args.append("--all-tensors")
        invoke(args, tmp)
        with np.load(out, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}


def check(model: PathLike, torch_dump: Union[None, PathLike, Any] = None, inputs: Inputs = None,
          config: Config = "all", *, example_inputs: Optional[Sequence[Any]] = None,
          tolerance: Union[None, float, Mapping[str, Any]] = None,
          reference_model: Optional[PathLike] = None, report_dir: Optional[PathLike] = None,
          seed: int = 0, runs: int = 20, locate_on_failure: bool = True, dataset: Any = None,
          engine: str = "local", ray_address: Optional[str] = None, ray_actors: int = 2,
          on_bad_sample: str = "fail", dataset_locate: int = 3, batch_size: int = 32,
          reference_ort_library: Optional[PathLike] = None) -> Report:
    """The whole validation of ``model`` (``parity check``); returns a :class:`Report`.

    torch_dump: a PyTorch dump directory (``--torch``), or an ``nn.Module`` (dumped here with
    ``example_inputs``, filed under the model's input names). inputs: samples
    ({name: array} or a file); default: generated from the signature.
    config: the deployed config (level, JSON path or dict). tolerance: a fixed
    atol or a policy dict. report_dir: keep report.json/report.html/junit.xml
    there (else a temporary copy backs ``save_html``). A failed check is a
    Report with ``passed == False``, not an exception.

    dataset: judge every sample of a dataset instead (``--dataset``, docs/dataset.md):
    a path, an iterable of {name: array} dicts or a ``ray.data.Dataset``; the
    Report is then parity.dataset/1. engine: "local" or "ray" (Ray Data on
    ``ray_actors`` actors; ``ray_address`` joins a cluster, default a local one).
    on_bad_sample: "fail" or "skip"; dataset_locate: the worst samples located.
    With a dataset, torch_dump may be a ``torch.nn.Module``: the reference is then the
    module run here on each batch of ``batch_size`` samples (docs/dataset.md).
    reference_ort_library: run the reference on this libonnxruntime, in a child process,
    at ``config`` (``--reference-ort-library``): two ORT releases compared, the target on
    this environment's (docs/locate.md "Two runtimes"); report.json's ``reference_runtime``
    names it.
    """
    tmp_obj = tempfile.TemporaryDirectory(prefix="parity-check-")
    tmp = tmp_obj.name
    args = ["check", os.fspath(model), *config_args(config, tmp), *_tolerance_args(tolerance, tmp),
            "--seed", str(seed), "--runs", str(runs)]
    if dataset is not None and torch_dump is not None and not isinstance(torch_dump, (str, os.PathLike)):
        from ._dataset import module_reference_args
        names = _signature(model, tmp)
        args += module_reference_args(torch_dump, dataset, names["inputs"], names["outputs"], tmp, int(batch_size))
        args += _dataset_args(None, tmp, engine, ray_address, ray_actors, on_bad_sample, dataset_locate)
        torch_dump = None
    elif dataset is not None:
        args += _dataset_args(dataset, tmp, engine, ray_address, ray_actors, on_bad_sample, dataset_locate)
    if torch_dump is not None:
        args += ["--torch", _torch_dir(torch_dump, model, example_inputs, tmp)]
    args += list(_inputs_args(inputs, tmp))
    if reference_model is not None:
        args += ["--reference-model", os.fspath(reference_model)]
    if reference_ort_library is not None:
        args += ["--reference-ort-library", os.fspath(reference_ort_library)]
    if not locate_on_failure:
        args.append("--no-locate")
    out_dir = os.fspath(report_dir) if report_dir is not None else os.path.join(tmp, "report")
    args += ["--report", out_dir]
    _, stdout = invoke(args, tmp, env=_ray_env() if engine == "ray" else None)
    with open(os.path.join(out_dir, "report.json")) as f:
        data = json.load(f)
    report = Report(data, summary=_strip_report_lines(stdout), html=os.path.join(out_dir, "report.html"),
                    report_dir=out_dir)
    report._tmp = tmp_obj  # keeps the temporary report alive as long as the Report
    return report


def locate(model: PathLike, inputs: Inputs = None, reference: Union[str, Mapping[str, Any]] = "disable",
           target: Config = "all", *, torch_dump: Union[None, PathLike] = None,
           target_model: Optional[PathLike] = None, tolerance: Union[None, float, Mapping[str, Any]] = None,
           repro: Optional[PathLike] = None, seed: int = 0, ablation: bool = True,
           reference_ort_library: Optional[PathLike] = None, target_ort_library: Optional[PathLike] = None) -> Report:
    """Finds where ``target`` departs from ``reference`` (``parity locate``).

    reference: a level, a config JSON path or dict, or ``torch_dump=DUMP_DIR`` (a
    PyTorch dump, ``--reference torch:DIR``). target: a level, JSON path or dict. Returns a parity.locate/1
    :class:`Report` whose ``first_divergence`` names the tensor, the fused node
    and the original nodes it covers. reference_ort_library / target_ort_library: run
    that side on another libonnxruntime (two ORT releases node by node; the report's
    ``runtimes`` names both).
    """
    with tempfile.TemporaryDirectory(prefix="parity-locate-") as tmp:
        out = os.path.join(tmp, "locate.json")
        args = ["locate", os.fspath(model), *_inputs_args(inputs, tmp), "--json", out, "--seed", str(seed),
                *_tolerance_args(tolerance, tmp)]
        if torch_dump is not None:
            args += ["--reference", "torch:" + os.fspath(torch_dump)]
        elif isinstance(reference, Mapping):
            path = os.path.join(tmp, "reference.json")
            with open(path, "w") as f:
                json.dump(dict(reference), f)
            args += ["--reference", path]
        else:
            args += ["--reference", str(reference)]
        if isinstance(target, str) and target in ("disable", "basic", "extended", "all"):
            args += ["--opt", target]
        elif target is not None:
            path = target if isinstance(target, (str, os.PathLike)) else _write_json(tmp, "target.json", target)
            args += ["--target", os.fspath(path)]
        if target_model is not None:
            args += ["--target-model", os.fspath(target_model)]
        if repro is not None:
            args += ["--repro", os.fspath(repro)]
        for flag, lib in (("--reference-ort-library", reference_ort_library),
                          ("--target-ort-library", target_ort_library)):
            if lib is not None:
                args += [flag, os.fspath(lib)]
        if not ablation:
            args.append("--no-ablation")
        _, stdout = invoke(args, tmp)
        with open(out) as f:
            return Report(json.load(f), summary=stdout)


def _dataset_args(dataset, tmp, engine, ray_address, ray_actors, on_bad_sample, dataset_locate):
    from ._dataset import dataset_args, engine_args
    return [*(dataset_args(dataset, tmp) if dataset is not None else []), *engine_args(engine, ray_address, ray_actors),
            "--on-bad-sample", str(on_bad_sample), "--dataset-locate", str(int(dataset_locate))]


def _ray_env() -> Dict[str, str]:
    """The Ray driver runs in this interpreter, with this package importable."""
    import sys
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return {"PARITY_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)}


def _write_json(tmp: str, name: str, obj: Mapping[str, Any]) -> str:
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(dict(obj), f)
    return path


def _strip_report_lines(stdout: str) -> str:
    return "\n".join(ln for ln in stdout.splitlines() if not ln.startswith("reports: "))


def _torch_dir(torch_dump: Any, model: PathLike, example_inputs: Optional[Sequence[Any]], tmp: str) -> str:
    if isinstance(torch_dump, (str, os.PathLike)):
        return os.fspath(torch_dump)
    # An nn.Module: dump it here under the ONNX model's input/output names.
    from . import torch as ptorch
    if example_inputs is None:
        raise ValueError("check(torch_dump=module) needs example_inputs=(tensor, ...)")
    names = _signature(model, tmp)
    out = os.path.join(tmp, "torch-dump")
    ptorch.dump(torch_dump, tuple(example_inputs), out, input_names=names["inputs"], output_names=names["outputs"])
    return out


def _signature(model: PathLike, tmp: str) -> Dict[str, Any]:
    path = os.path.join(tmp, "inspect.json")
    invoke(["inspect", os.fspath(model), "--json", path])
    with open(path) as f:
        j = json.load(f)
    info = j["info"]  # parity.inspect/1: the signature is under "info"
    return {"inputs": [v["name"] for v in info["inputs"]], "outputs": [v["name"] for v in info["outputs"]]}
