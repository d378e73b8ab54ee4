"""export(): torch.onnx.export with either exporter, plus a record of what
the user asked for and what the file holds."""

import copy
import hashlib
import inspect
import os
import warnings

import torch

from .dump_folder import refuse_existing_dump
from .dumper import dump
from .dynamic import dims_in_file, normalize_dynamic_axes, to_dynamic_shapes
from .errors import ExportError
from .run_context import eval_mode, fastpath_disabled
from .signature import split_args
from .sizes import parse_sizes, plan_sizes, sized_args

EXPORTERS = ("dynamo", "torchscript")


def export(model, args, path, dump_dir=None, exporter=None, fp64=True, seed=0, force=False, **kwargs):
    """Exports model(*args) to the ONNX file `path` and returns the export
    record of docs/contract.md:
      {"exporter": "dynamo"|"torchscript", "opset", "input_names",
       "output_names", "dynamic_axes": {"images": {"0": "batch"}},
       "onnx_sha256", "onnx_input_names", "onnx_output_names", ...}

    exporter: "dynamo" (torch.export; torch >= 2.6) or "torchscript"; None
    takes `dynamo=` from kwargs, else torch's own default (dynamo since 2.9).
    kwargs go to torch.onnx.export, with these differences:
      - dynamic_axes ({"images": {0: "batch"}} or {"images": [0]}) works for
        both exporters: for dynamo it becomes dynamic_shapes keyed by the
        forward's argument names, each label naming its axis in the file
        (entries for outputs are dropped: torch.export infers those).
      - dynamo: external_data defaults to False (weights inside the file, so
        onnx_sha256 covers them; torch still splits files over 2 GB),
        verbose to False; the model runs in eval mode with the fused
        transformer fast path off, as dump() runs it (flags restored after).
      - the exporter traces a deep copy of `model` (traced_copy): `model`
        itself is left as it was, for dump() and the caller.
    dynamic_axes given as lists are recorded with the names torch gives them
    ("<name>_dynamic_axes_<k>", k from 1); the record's onnx_dynamic_dims
    says which dims are symbolic in the file.

    With dump_dir, also dump()s the model there (fp64, seed as dump's) with
    the file's input/output names and stores the record in its manifest;
    a dump_dir that already holds a dump raises FileExistsError before the
    export unless force=True (as dump() does).
    Raises ExportError (one-line message; the exporter's error as __cause__)
    when the exporter fails, ValueError for a request it cannot express;
    then nothing is dumped.
    """
    if dump_dir is not None:
        refuse_existing_dump(dump_dir, force)
    exporter = resolve_exporter(exporter, kwargs)
    asked_axes = copy.deepcopy(kwargs.get("dynamic_axes"))
    call_args, call_kwargs = _call(model, args, exporter, dict(kwargs))
    traced = traced_copy(model)
    with eval_mode(traced), fastpath_disabled(traced), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.onnx.export(traced, call_args, path, **call_kwargs)
        except Exception as e:  # noqa: BLE001 -- whatever the exporter raises
            raise ExportError(exporter, e) from e
    del traced
    for w in caught:  # the caller still sees every warning, as without us
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    record = export_record(dict(kwargs, dynamo=exporter == "dynamo"), path, asked_axes)
    tracer = tracer_warnings(caught)
    if tracer:
        record["tracer_warnings"] = tracer
    if "dynamic_shapes" in call_kwargs and call_kwargs["dynamic_shapes"] is not None:
        record["dynamic_shapes"] = _jsonable_shapes(call_kwargs["dynamic_shapes"])
    if dump_dir is not None:
        names = dump_names(record, kwargs)
        dump(model, args, dump_dir, export_info=record, fp64=fp64, seed=seed, force=force,
             sizes=export_sizes(model, args, names["input_names"], record, seed), **names)
    return record


def traced_copy(model):
    """The module an export may trace: a deep copy of `model`, so that the
    caller's module (which dump() runs next) is never one an export traced.
    torch.export leaves state behind in what it traced (Ultralytics' YOLO kept
    tensor subclasses there: `.numpy() is not supported for tensor
    subclasses` in the dump after a dynamo export). A model that cannot be
    copied is exported itself, with a warning."""
    try:
        return copy.deepcopy(model)
    except Exception as e:  # noqa: BLE001 -- any module deepcopy refuses
        warnings.warn(f"parity.torch: the model cannot be copied for the export ({type(e).__name__}: {e}); "
                      "the export traces the model itself, and a dump made after it may see what the export "
                      "left in it")
        return model


def tracer_warnings(caught):
    """The distinct TracerWarnings among recorded warnings, as
    "file:line: message" (torch warns when a trace turns a value into a
    constant: the export may then be wrong at other shapes)."""
    out = []
    for w in caught:
        if w.category.__name__ != "TracerWarning":
            continue
        text = f"{os.path.basename(w.filename)}:{w.lineno}: {str(w.message).splitlines()[0]}"
        if text not in out:
            out.append(text)
    return out


def export_sizes(model, args, input_names, record, seed, specs=None):
    """[(sample name, args)] for dump(sizes=): the sizes of `specs` (--sizes)
    or, by default, joint sizes on the export record's dynamic axes that keep
    the relations between them (sizes.py, relations.py; the relations found
    go into the record as "size_relations"). Empty when the args are not one
    tensor per input."""
    from .signature import input_names_for
    pos_args, kw_args = split_args(args)
    names = input_names_for(model, pos_args, kw_args, input_names)
    if kw_args or len(names) != len(pos_args):
        return []
    traced = {n: list(a.shape) for n, a in zip(names, pos_args) if isinstance(a, torch.Tensor)}
    if specs:
        wanted = parse_sizes(specs, names)
    else:
        wanted, relations = plan_sizes(traced, record.get("dynamic_axes"),
                                       file_dims=record.get("onnx_dynamic_dims"))
        if relations.describe():
            record["size_relations"] = relations.describe()
    out = []
    for k, (name, shapes) in enumerate(wanted):
        sized = sized_args(tuple(pos_args), names, shapes, seed + 1 + k)
        if sized is not None:
            out.append((name, sized))
    return out


def resolve_exporter(exporter, kwargs):
    """"dynamo"/"torchscript" from the argument, or kwargs' dynamo=, or torch's
    default. Pops dynamo= from kwargs. ValueError when they disagree."""
    dynamo = kwargs.pop("dynamo", None)
    if exporter is None:
        exporter = ("dynamo" if dynamo else "torchscript") if dynamo is not None else (
            "dynamo" if _default_dynamo() else "torchscript")
    if exporter not in EXPORTERS:
        raise ValueError(f"exporter '{exporter}': expected one of {', '.join(EXPORTERS)}")
    if dynamo is not None and bool(dynamo) != (exporter == "dynamo"):
        raise ValueError(f"exporter '{exporter}' contradicts dynamo={dynamo}")
    return exporter


def _call(model, args, exporter, kwargs):
    """(args, kwargs) for torch.onnx.export under the chosen exporter."""
    if exporter == "torchscript":
        if kwargs.get("dynamic_shapes") is not None:
            raise ValueError("dynamic_shapes needs the dynamo exporter; give dynamic_axes for torchscript")
        kwargs.pop("dynamic_shapes", None)
        if "dynamo" in _export_params():
            kwargs["dynamo"] = False
        return args, kwargs
    params = _export_params()
    if "dynamo" not in params:
        raise ValueError(f"the dynamo exporter needs torch >= 2.6 (this is {torch.__version__}); "
                         "use the torchscript exporter")
    kwargs["dynamo"] = True
    opset = kwargs.get("opset_version")
    if opset is not None and opset < 18:
        # torch's dynamo exporter writes opset 18+ and converts down with ONNX's
        # version converter, which drops node metadata_props: parity then has
        # no module scopes and aligns that export by value only.
        warnings.warn(f"parity.torch: the dynamo exporter converts opset 18 down to {opset} and loses the "
                      "node scopes parity aligns by (pkg.torch.onnx.name_scopes); use opset_version >= 18")
    axes = kwargs.pop("dynamic_axes", None)
    if axes and kwargs.get("dynamic_shapes") is None:
        shapes, unused = to_dynamic_shapes(model, args, kwargs.get("input_names"), axes)
        unknown = [n for n in unused if n not in (kwargs.get("output_names") or [])]
        if unknown:
            raise ValueError(f"dynamic_axes: '{unknown[0]}' is neither an input nor an output name")
        kwargs["dynamic_shapes"] = shapes
    for key, value in (("external_data", False), ("verbose", False)):
        if key in params:
            kwargs.setdefault(key, value)
    pos_args, kw_args = split_args(args)
    if kw_args:
        kwargs["kwargs"] = {**kw_args, **(kwargs.get("kwargs") or {})}
    return pos_args, kwargs


def dump_names(record, kwargs):
    """input_names/output_names for dump(): the user's, else those in the file
    (torch names unnamed outputs after graph values, e.g. "9" or "onnx::Add_12")."""
    return {
        "input_names": kwargs.get("input_names") or record.get("onnx_input_names"),
        "output_names": kwargs.get("output_names") or record.get("onnx_output_names"),
    }


def export_record(kwargs, path=None, dynamic_axes=None):
    """The record for torch.onnx.export keyword arguments (see export())."""
    dynamo = bool(kwargs.get("dynamo", _default_dynamo()))
    opset = kwargs.get("opset_version")
    facts = _graph_facts(path)
    record = {
        "exporter": "dynamo" if dynamo else "torchscript",
        "opset": opset if opset is not None else facts.get("onnx_opset", _default_opset()),
        "opset_requested": opset is not None,
        "input_names": list(kwargs.get("input_names") or []),
        "output_names": list(kwargs.get("output_names") or []),
        "dynamic_axes": normalize_dynamic_axes(
            dynamic_axes if dynamic_axes is not None else kwargs.get("dynamic_axes")),
        "training": False,
        "torch_version": torch.__version__,
    }
    options = {k: v for k, v in kwargs.items()
               if k not in ("opset_version", "input_names", "output_names", "dynamic_axes", "dynamo")
               and isinstance(v, (bool, int, float, str, type(None)))}
    if options:
        record["options"] = options
    if isinstance(path, (str, os.PathLike)) and os.path.isfile(path):
        record["onnx_file"] = os.fspath(path)
        record["onnx_sha256"] = _sha256(path)
        record.update(facts)
        record["onnx_dynamic_dims"] = dims_in_file(path)
    return record


def _jsonable_shapes(shapes):
    """dynamic_shapes as JSON: labels for str/Dim, null for static."""
    if isinstance(shapes, dict) and all(isinstance(k, int) for k in shapes):
        return {str(a): _dim_label(d) for a, d in shapes.items()}
    if isinstance(shapes, dict):
        return {k: _jsonable_shapes(v) for k, v in shapes.items()}
    if isinstance(shapes, (list, tuple)):
        return [_jsonable_shapes(v) for v in shapes]
    return None if shapes is None else _dim_label(shapes)


def _dim_label(d):
    return d if isinstance(d, str) or d is None else getattr(d, "__name__", str(d))


def _export_params():
    try:
        return set(inspect.signature(torch.onnx.export).parameters)
    except (TypeError, ValueError):
        return set()


def _default_dynamo():
    """torch.onnx.export's own default for dynamo= (absent before 2.5, True from 2.9)."""
    try:
        param = inspect.signature(torch.onnx.export).parameters.get("dynamo")
    except (TypeError, ValueError):
        return False
    return bool(param.default) if param is not None and param.default is not param.empty else False


def _default_opset():
    """torch's default opset, for when the file cannot be read."""
    from torch.onnx import _constants
    for attr in ("ONNX_DEFAULT_OPSET", "onnx_default_opset"):
        if hasattr(_constants, attr):
            return getattr(_constants, attr)
    return None


def _graph_facts(path):
    """What the file says, when onnx is there: its real input (not initializer)
    and output names, its default-domain opset, and any external data files
    with their sha256 (so the record pins the weights too)."""
    try:
        import onnx
        if not (isinstance(path, (str, os.PathLike)) and os.path.isfile(path)):
            return {}
        proto = onnx.load(os.fspath(path), load_external_data=False)
    except Exception:  # onnx missing or the file unreadable: nothing known
        return {}
    graph = proto.graph
    inits = {i.name for i in graph.initializer}
    facts = {"onnx_input_names": [i.name for i in graph.input if i.name not in inits],
             "onnx_output_names": [o.name for o in graph.output]}
    for imp in proto.opset_import:
        if imp.domain in ("", "ai.onnx"):
            facts["onnx_opset"] = int(imp.version)
    locations = sorted({e.value for t in graph.initializer for e in t.external_data if e.key == "location"})
    if locations:
        base = os.path.dirname(os.fspath(path))
        facts["onnx_external_data"] = [
            {"file": loc, "sha256": _sha256(os.path.join(base, loc))
             if os.path.isfile(os.path.join(base, loc)) else None} for loc in locations]
    return facts


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
