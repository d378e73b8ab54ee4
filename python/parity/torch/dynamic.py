"""Dynamic axes for both exporters.

The TorchScript exporter takes `dynamic_axes` keyed by ONNX names; the dynamo
exporter (torch.export) takes `dynamic_shapes` keyed by the forward's argument
names. parity.torch accepts the first form for both and translates it here, so
one request (`--dynamic images:0:batch`) means the same thing whichever
exporter runs, and the label becomes the dim_param in the file.
"""

import inspect

import torch

from .flatten import flatten
from .signature import split_args


def normalize_dynamic_axes(dynamic_axes):
    """{"x": [0, 2]} -> {"x": {"0": "x_dynamic_axes_1", "2": "x_dynamic_axes_2"}};
    {"x": {0: "batch"}} -> {"x": {"0": "batch"}}. Keys become strings (JSON).
    The list form gets the names torch's TorchScript exporter gives it."""
    out = {}
    for name, axes in (dynamic_axes or {}).items():
        if isinstance(axes, dict):
            out[name] = {str(int(a)): str(label) for a, label in axes.items()}
        else:
            out[name] = {str(int(a)): f"{name}_dynamic_axes_{k + 1}"
                         for k, a in enumerate(axes)}
    return out


def to_dynamic_shapes(model, args, input_names, dynamic_axes):
    """dynamic_axes (keyed by ONNX input names) -> torch.export dynamic_shapes,
    a dict keyed by the forward's argument names.

    input_names name the flattened inputs in order (as torch.onnx.export
    applies them); an input not named there is looked up under its forward
    argument name. Each axis becomes its label (a string: torch >= 2.6 turns
    it into Dim.DYNAMIC and names the axis after it in the file) or, on older
    torch, a torch.export.Dim of that name, shared by every axis with that
    label. Entries for outputs are dropped: torch.export infers them.

    Returns (dynamic_shapes, names in dynamic_axes that name no input: outputs,
    or mistakes; the caller tells them apart). Raises ValueError for an axis on
    an argument that is not a single tensor (nested inputs need dynamic_shapes
    given directly) or a forward taking *args.
    """
    pos_args, kw_args = split_args(args)
    params = _bind(model, pos_args, kw_args)
    asked = normalize_dynamic_axes(dynamic_axes)
    names = list(input_names or [])
    make_dim = _dim_factory()
    shapes, used, flat_index = {}, set(), 0
    for param, value in params:
        count = len(flatten(value))
        onnx_names = names[flat_index:flat_index + count]
        if count == 1 and not onnx_names:
            onnx_names = [param]
        flat_index += count
        hits = [n for n in onnx_names if n in asked]
        if not hits:
            shapes[param] = None
            continue
        if not isinstance(value, torch.Tensor):
            raise ValueError(f"dynamic axes for '{hits[0]}': argument '{param}' is not a single tensor; "
                             "give dynamic_shapes directly")
        used.add(hits[0])
        shapes[param] = {int(a): make_dim(label) for a, label in asked[hits[0]].items()}
    return shapes, sorted(set(asked) - used)


def _bind(model, pos_args, kw_args):
    """[(argument name, value)] in call order; positional names from the forward."""
    try:
        sig = inspect.signature(model.forward)
        params = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) < len(pos_args):
        raise ValueError("dynamic axes: the forward takes *args; give dynamic_shapes directly")
    return [(params[i].name, v) for i, v in enumerate(pos_args)] + list(kw_args.items())


def _dim_factory():
    """label -> what torch.export takes for a named dynamic axis on this torch."""
    try:
        from torch.onnx._internal.exporter import _dynamic_shapes
        if hasattr(_dynamic_shapes, "convert_str_to_export_dim"):
            return str
    except ImportError:
        pass
    dims = {}

    def make(label):
        if label not in dims:
            dims[label] = torch.export.Dim(label)
        return dims[label]
    return make


def dims_in_file(path):
    """{input or output name: {"axis": dim_param}} for the symbolic dims in an ONNX file."""
    try:
        import onnx
        graph = onnx.load(str(path), load_external_data=False).graph
    except Exception:  # onnx missing or unreadable: nothing to report
        return {}
    out = {}
    for v in list(graph.input) + list(graph.output):
        dims = {str(i): d.dim_param for i, d in enumerate(v.type.tensor_type.shape.dim) if d.dim_param}
        if dims:
            out[v.name] = dims
    return out
