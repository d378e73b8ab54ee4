"""The dumper's forward hooks: every module's output (and, optionally, the
tensors each module call received) written as the run goes, and listed as
the manifest's "layers"."""

import os

from .control_flow import capturing
from .flatten import flatten, is_single_tensor
from .tensors import sanitize, write_tensor


class LayerRecorder:
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
            entry = write_tensor(self.out_dir, fname, tensor, self.written)
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
            entry = write_tensor(self.out_dir, fname, tensor, self.written)
            self.layers.append({
                "file": entry.pop("file"), "module": path, "type": type(module).__name__,
                "call": call, "output_index": None if single else k,
                "order": self.order, "is_leaf": is_leaf, **entry})
            if (path, call) in self.pending:
                self.layers[-1]["inputs"] = self.pending[(path, call)]
        self.pending.pop((path, call), None)
        self.order += 1
