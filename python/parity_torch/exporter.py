"""export(): torch.onnx.export plus a record of what the user asked for."""

import copy
import hashlib
import os

import torch

from .dumper import dump


def export(model, args, path, dump_dir=None, **kwargs):
    """Calls torch.onnx.export(model, args, path, **kwargs) unchanged and
    returns the export record of SPEC.md:
      {"exporter": "torchscript"|"dynamo", "opset", "input_names",
       "output_names", "dynamic_axes": {"images": {"0": "batch"}}, ...}
    dynamic_axes given as lists are recorded with the names torch gives
    them ("<name>_dynamic_axes_<k>", k counting from 1) so the record matches
    the dim_param in the file. With dump_dir, also dump()s the model there
    with the same input/output names and stores the record in its manifest.
    Raises whatever torch.onnx.export raises; then nothing is dumped.
    """
    asked = {k: copy.deepcopy(v) for k, v in kwargs.items() if k == "dynamic_axes"}
    torch.onnx.export(model, args, path, **kwargs)
    record = export_record(kwargs, path, asked.get("dynamic_axes"))
    if dump_dir is not None:
        dump(model, args, dump_dir, export_info=record, **dump_names(record, kwargs))
    return record


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
    record = {
        "exporter": "dynamo" if dynamo else "torchscript",
        "opset": opset if opset is not None else _opset_used(path, dynamo),
        "opset_requested": opset is not None,
        "input_names": list(kwargs.get("input_names") or []),
        "output_names": list(kwargs.get("output_names") or []),
        "dynamic_axes": normalize_dynamic_axes(
            dynamic_axes if dynamic_axes is not None else kwargs.get("dynamic_axes")),
        "torch_version": torch.__version__,
    }
    options = {k: v for k, v in kwargs.items()
               if k not in ("opset_version", "input_names", "output_names", "dynamic_axes")
               and isinstance(v, (bool, int, float, str, type(None)))}
    if options:
        record["options"] = options
    if isinstance(path, (str, os.PathLike)) and os.path.isfile(path):
        record["onnx_file"] = os.fspath(path)
        record["onnx_sha256"] = _sha256(path)
        record.update(_graph_names(path))
    return record


def normalize_dynamic_axes(dynamic_axes):
    """{"x": [0, 2]} -> {"x": {"0": "x_dynamic_axes_1", "2": "x_dynamic_axes_2"}};
    {"x": {0: "batch"}} -> {"x": {"0": "batch"}}. Keys become strings (JSON)."""
    out = {}
    for name, axes in (dynamic_axes or {}).items():
        if isinstance(axes, dict):
            out[name] = {str(int(a)): str(label) for a, label in axes.items()}
        else:
            out[name] = {str(int(a)): f"{name}_dynamic_axes_{k + 1}"
                         for k, a in enumerate(axes)}
    return out


def _default_dynamo():
    """torch.onnx.export's own default for dynamo= (absent before 2.5, True from 2.9)."""
    import inspect
    try:
        param = inspect.signature(torch.onnx.export).parameters.get("dynamo")
    except (TypeError, ValueError):
        return False
    return bool(param.default) if param is not None and param.default is not param.empty else False


def _opset_used(path, dynamo):
    """The default-domain opset actually in the file, else torch's default."""
    try:
        import onnx
        if isinstance(path, (str, os.PathLike)) and os.path.isfile(path):
            model = onnx.load(os.fspath(path), load_external_data=False)
            for imp in model.opset_import:
                if imp.domain in ("", "ai.onnx"):
                    return int(imp.version)
    except Exception:  # onnx missing or the file unreadable: fall back below
        pass
    from torch.onnx import _constants
    for attr in ("ONNX_DEFAULT_OPSET", "onnx_default_opset"):
        if hasattr(_constants, attr):
            return getattr(_constants, attr)
    return None


def _graph_names(path):
    """The graph's real input (not initializer) and output names, when onnx is there."""
    try:
        import onnx
        graph = onnx.load(os.fspath(path), load_external_data=False).graph
    except Exception:  # onnx missing or the file unreadable: names unknown
        return {}
    inits = {i.name for i in graph.initializer}
    return {"onnx_input_names": [i.name for i in graph.input if i.name not in inits],
            "onnx_output_names": [o.name for o in graph.output]}


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
