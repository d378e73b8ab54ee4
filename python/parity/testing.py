"""parity.testing: a pytest helper that asserts an export computes what PyTorch computes."""
import os
import tempfile
from typing import Any, Mapping, Optional, Sequence, Union

from ._kwargs import given
from .engine import check
from .report import Report

__all__ = ["assert_export_matches"]


def assert_export_matches(module: Any, example_inputs: Union[Any, Sequence[Any]], config: Any = "all", *,
                          exporter: str = "dynamo", opset: Optional[int] = None,
                          input_names: Optional[Sequence[str]] = None,
                          output_names: Optional[Sequence[str]] = None,
                          dynamic_axes: Optional[Mapping[str, Any]] = None,
                          tolerance: Union[None, float, Mapping[str, Any]] = None,
                          inputs: Any = None, report_dir: Optional[str] = None, runs: int = 3,
                          **export_kwargs: Any) -> Report:
    """Exports ``module``, dumps it, checks the export under ``config``; raises on a mismatch.

    module, example_inputs: what ``torch.onnx.export`` takes (a tensor or a
    tuple). exporter: "dynamo" or "torchscript". config: the ORT config the
    model will be deployed with ("all", "disable", a JSON path or dict).
    opset, input_names, output_names, dynamic_axes and export_kwargs go to
    the exporter (parity.torch.export). tolerance: a fixed atol or a policy
    dict (default: calibrated on the dump's float64 outputs). inputs: extra
    samples for the check ({name: array} or a file). report_dir: where the
    reports go (default: a new folder under the temp dir, kept).

    Returns the passing :class:`parity.Report`. On failure raises
    AssertionError whose message is the console summary (the first divergent
    module, the worst output) followed by the HTML report's path.

    Example (a test file)::

        import torch, torchvision
        from parity.testing import assert_export_matches

        def test_resnet18_export():
            model = torchvision.models.resnet18(weights=None).eval()
            assert_export_matches(model, (torch.randn(1, 3, 224, 224),), config="all")
    """
    __tracebackhide__ = True  # a failure shows the caller's line and the message, not this helper's source
    from . import torch as ptorch
    args = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    work = report_dir or tempfile.mkdtemp(prefix="parity-assert-")
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, "model.onnx")
    dump_dir = os.path.join(work, "torch-dump")
    kwargs = dict(export_kwargs)
    kwargs.update(given(opset_version=opset))
    kwargs.update(given(list, input_names=input_names, output_names=output_names))
    kwargs.update(given(dict, dynamic_axes=dynamic_axes))
    # The dump under `work` is this helper's own: a second call with the same report_dir replaces it.
    ptorch.export(module, args, onnx_path, dump_dir=dump_dir, exporter=exporter, force=True, **kwargs)
    report = check(onnx_path, torch_dump=dump_dir, inputs=inputs, config=config, tolerance=tolerance,
                   report_dir=os.path.join(work, "report"), runs=runs)
    if not report.passed:
        html = os.path.join(report.report_dir, "report.html")
        what = "could not be judged" if report.verdict == "NOT JUDGED" else "does not match PyTorch"
        raise AssertionError(f"ONNX export ({exporter}) {what} under config {config!r}:\n"
                             f"{report.summary.rstrip()}\nHTML report: {html}")
    return report
