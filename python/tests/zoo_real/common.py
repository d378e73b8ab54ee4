"""Helpers the real exporters' builders share: seeded inputs in their real
ranges, BatchNorm statistics measured on those inputs, planted faults, dumps."""

import contextlib
import copy
import os
import shutil
import tempfile

import numpy as np
import torch

from parity.torch.dumper import dump
from parity.torch.exporter import dump_names, export, export_sizes


def images(batch=1, size=320, seed=0):
    """Images in [0, 1] (what an image pipeline feeds a detector), smooth enough
    to look like one: uniform noise blurred by a 4x4 box, plus a gradient."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(batch, 3, size // 4, size // 4, generator=g)
    x = torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    ramp = torch.linspace(0, 1, size).view(1, 1, 1, size)
    return (0.7 * x + 0.3 * ramp).clamp(0, 1)


def calibrate_batchnorm(model, batches, perturb_seed=0):
    """Running statistics measured on real-range inputs (a cumulative average
    over `batches`), then the affine parameters moved off 1/0 so that folding
    a BatchNorm into its Conv changes the weights. Leaves the model in eval."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for b in batches:
            model(b)
    for m, momentum in zip(bns, saved):
        m.momentum = momentum
    g = torch.Generator().manual_seed(perturb_seed)
    with torch.no_grad():
        for m in bns:
            if m.affine:
                m.weight.mul_(0.8 + 0.4 * torch.rand(m.weight.shape, generator=g))
                m.bias.add_(0.05 * torch.randn(m.bias.shape, generator=g))
    return model.eval()


def scale_parameters(model, prefixes, factor, names=("weight",)):
    """Multiplies the named parameters of every module whose path is one of
    `prefixes` by `factor` (a planted fault); returns the paths changed."""
    changed = []
    modules = dict(model.named_modules())
    with torch.no_grad():
        for p in prefixes:
            module = modules[p]
            for n in names:
                t = getattr(module, n, None)
                if t is not None:
                    t.mul_(factor)
                    changed.append(f"{p}.{n}")
    if not changed:
        raise ValueError(f"no parameter {names} under {prefixes}")
    return changed


def write_dump(model, args, out_dir, input_names, output_names=None, sizes=None):
    """parity.torch's dump of model(*args), the way `python -m parity.torch dump` writes it."""
    shutil.rmtree(out_dir, ignore_errors=True)
    return dump(model, args, out_dir, input_names=list(input_names), output_names=output_names, sizes=sizes)


@contextlib.contextmanager
def working_dir():
    """A scratch current directory (exporters that write next to the cwd)."""
    here = os.getcwd()
    d = tempfile.mkdtemp(prefix="zoo_real.")
    os.chdir(d)
    try:
        yield d
    finally:
        os.chdir(here)
        shutil.rmtree(d, ignore_errors=True)


def ort_session(path):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def run_onnx(path, feeds):
    s = ort_session(path)
    return s.run(None, feeds)


def save_npz(path, arrays):
    np.savez(path, **{k: np.ascontiguousarray(v) for k, v in arrays.items()})


def export_and_dump(model, args, out, name, **kwargs):
    """out/NAME.onnx and out/NAME_dump/: parity.torch's export(model,
    dump_dir=...) made in two steps, the export tracing a copy and the dump
    running the untouched module. In one step the dump of a dynamo export fails
    on YOLO (`.numpy() is not supported for tensor subclasses`: it runs the
    module the export traced; issue 40). Returns the export record."""
    record = export(copy.deepcopy(model), args, os.path.join(out, f"{name}.onnx"), **kwargs)
    names = dump_names(record, kwargs)
    sizes = export_sizes(model, args, names["input_names"], record, 0)
    shutil.rmtree(os.path.join(out, f"{name}_dump"), ignore_errors=True)
    dump(model, args, os.path.join(out, f"{name}_dump"), export_info=record, sizes=sizes, **names)
    return record
