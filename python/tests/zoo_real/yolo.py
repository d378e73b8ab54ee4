"""Ultralytics YOLOv8n as users export it, with its PyTorch dumps and planted
faults (issue 40). Random weights from the yaml (nothing is downloaded);
BatchNorm statistics measured on [0, 1] images; 320x320.

    yolo/ultra.onnx          YOLO('yolov8n.yaml').export(format='onnx', dynamic=True)
    yolo/ultra_deep.onnx     the same export with model.4.m.1.cv1.conv.weight x1.05
    yolo/ultra_cls3.onnx     ... with the three class-branch output convs (model.22.cv3.*.2) x3
    yolo/dump/               parity.torch's dump of the DetectionModel (as exported: Detect.export)
    yolo/dump_wrapped/       the same module behind a one-line wrapper (paths model.model.4...)
    yolo/dynamo.onnx + dynamo_dump/   parity.torch's dynamo export of the plain eval module
                             (tuple output), anchors from the input's shape (Detect.dynamic)
    yolo/dynamo_deep.onnx    the same with the deep fault
    yolo/dynamo_fixed.onnx + dynamo_fixed_dump/   the same without Detect.dynamic: anchors of
                             the traced size baked in, the export refuses every other size
    yolo/guide.onnx + guide_dump/     TorchScript export with the guides' height/width labels on
                                      every map output
"""

import copy
import os
import shutil

import torch

from parity.torch.exporter import export

from .common import calibrate_batchnorm, export_and_dump, images, scale_parameters, working_dir, write_dump

SIZE = 320
DEEP = "model.4.m.1.cv1.conv"        # planted: a deep backbone conv (its BatchNorm is model.4.m.1.cv1.bn)
CLASS_CONVS = [f"model.22.cv3.{i}.2" for i in range(3)]  # the class branch's output convs
BOX_CONVS = [f"model.22.cv2.{i}.2" for i in range(3)]    # the box branch's (DFL logits)


class Wrapper(torch.nn.Module):
    """The one-line wrapper users put around a model (paths gain `model.`)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


def detection_model():
    """YOLO('yolov8n.yaml') with seeded random weights and measured BN statistics."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO
    torch.manual_seed(0)
    yolo = YOLO("yolov8n.yaml", verbose=False)
    calibrate_batchnorm(yolo.model, [images(2, SIZE, seed=10 + k) for k in range(3)])
    trained_like_heads(yolo.model)
    return yolo


def trained_like_heads(model):
    """Class logits spread like a trained detector's (most anchors' scores near
    0.01, a few above 0.5) rather than bias_init's ~1e-5 everywhere, and DFL
    logits of a moderate spread (random ones are peaked: a box then jumps
    between bins at the slightest change, which no trained detector does)."""
    _spread(model, CLASS_CONVS, 1.5, -6.0)
    _spread(model, BOX_CONVS, 0.5, None)


def _spread(model, paths, std, bias):
    """Scales each conv of paths to an output std of `std` around `bias`
    (None: its own bias kept), measured on an image."""
    heads = dict(model.named_modules())
    seen = {}
    hooks = [heads[p].register_forward_hook(lambda m, i, o, p=p: seen.__setitem__(p, o.detach()))
             for p in paths]
    with torch.no_grad():
        model.eval()(images(1, SIZE, seed=7))
        for h in hooks:
            h.remove()
        for p in paths:
            conv = heads[p]
            spread = float((seen[p] - conv.bias.view(1, -1, 1, 1)).std())
            conv.weight.mul_(std / max(spread, 1e-12))
            if bias is not None:
                conv.bias.fill_(bias)


def as_exported(model):
    """The module in the mode Ultralytics' exporter runs it: Detect returns the
    decoded output alone, anchors from the input's shape."""
    m = copy.deepcopy(model).eval()
    head = m.model[-1]
    head.export, head.format, head.dynamic = True, "onnx", True
    return m


def dynamic_anchors(model):
    """The plain eval module (its (decoded, raw) tuple output) with anchors
    computed from the input's shape, as Ultralytics' exporter sets it."""
    m = copy.deepcopy(model).eval()
    m.model[-1].dynamic = True
    return m


def ultralytics_export(yolo, path):
    """YOLO.export(format='onnx', dynamic=True), as the docs say; the file moved to path."""
    with working_dir():
        produced = yolo.export(format="onnx", dynamic=True, imgsz=SIZE, verbose=False)
        shutil.move(str(produced), path)


def with_fault(yolo, prefixes, factor, names=("weight",)):
    faulty = copy.deepcopy(yolo)
    scale_parameters(faulty.model, prefixes, factor, names)
    return faulty


def build(out):
    """Writes every file above into out/; returns facts for the stamp."""
    yolo = detection_model()
    x = images(1, SIZE, seed=0)
    ultralytics_export(yolo, os.path.join(out, "ultra.onnx"))
    ultralytics_export(with_fault(yolo, [DEEP], 1.05), os.path.join(out, "ultra_deep.onnx"))
    ultralytics_export(with_fault(yolo, CLASS_CONVS, 3.0, ("weight", "bias")), os.path.join(out, "ultra_cls3.onnx"))
    exported = as_exported(yolo.model)
    write_dump(exported, (x,), os.path.join(out, "dump"), ["images"], ["output0"])
    write_dump(Wrapper(exported), (x,), os.path.join(out, "dump_wrapped"), ["images"], ["output0"])
    axes = {"images": {0: "batch", 2: "height", 3: "width"}}
    plain = copy.deepcopy(yolo.model).eval()
    export_and_dump(plain, (x,), out, "dynamo_fixed", exporter="dynamo", input_names=["images"], dynamic_axes=axes)
    shaped = dynamic_anchors(yolo.model)
    export_and_dump(shaped, (x,), out, "dynamo", exporter="dynamo", input_names=["images"], dynamic_axes=axes)
    export(dynamic_anchors(with_fault(yolo, [DEEP], 1.05).model), (x,), os.path.join(out, "dynamo_deep.onnx"),
           exporter="dynamo", input_names=["images"], dynamic_axes=axes)
    guide_export(plain, x, out)
    with torch.no_grad():
        y = exported(x)
    nc = y.shape[1] - 4
    scores = y[:, 4:]
    return {"output0": list(y.shape), "classes": nc, "box_absmax": float(y[:, :4].abs().max()),
            "score_max": float(scores.max()), "score_median": float(scores.median())}


GUIDE_OUTPUTS = ["output0", "boxes", "scores", "p3", "p4", "p5"]


def guide_export(plain, x, out):
    """The plain eval module ((decoded, {boxes, scores, feats})) exported with
    the axes the common guides write: height/width on the input and on every
    map, though the maps are 1/8, 1/16, 1/32 of it."""
    hw = {0: "batch", 2: "height", 3: "width"}
    axes = {"images": hw, "output0": {0: "batch"}, "boxes": {0: "batch"}, "scores": {0: "batch"},
            "p3": hw, "p4": hw, "p5": hw}
    export_and_dump(plain, (x,), out, "guide", exporter="torchscript", input_names=["images"],
                    output_names=GUIDE_OUTPUTS, dynamic_axes=axes)


def build_derived(out):
    """int8 and fp16 copies of ultra.onnx; returns the truth for each.
    int8_saturated: quantize_static as documented (one output scale for the
    concat of boxes in pixels and scores <= 1); int8_tensor / int8_channel: the
    same with the head's decode kept in float (Ultralytics' own int8 recipes
    leave it out: ignored scope), the healthy twins (with random weights they are
    not: truth.json says how far). int8_concat: only the output's Concat
    quantized: boxes keep to half a step (1.25 px), every score becomes 0."""
    from . import derived
    src = os.path.join(out, "ultra.onnx")
    calib = [{"images": images(1, SIZE, seed=100 + k).numpy()} for k in range(4)]
    test = [{"images": images(1, SIZE, seed=200 + k).numpy()} for k in range(2)]
    head = derived.nodes_under(src, "/model.22/")
    made = {
        "int8_saturated": derived.quantize_qdq(src, os.path.join(out, "int8_saturated.onnx"), calib),
        "int8_tensor": derived.quantize_qdq(src, os.path.join(out, "int8_tensor.onnx"), calib, exclude=head),
        "int8_channel": derived.quantize_qdq(src, os.path.join(out, "int8_channel.onnx"), calib,
                                             per_channel=True, exclude=head),
        "fp16": derived.to_fp16(src, os.path.join(out, "fp16.onnx")),
        "int8_concat": derived.quantize_qdq(src, os.path.join(out, "int8_concat.onnx"), calib,
                                            only=[derived.producer_of(src, "output0")]),
    }
    return {k: derived.detector_truth(derived.compare_outputs(src, p, test)) for k, p in made.items()}
