"""Ultralytics models of issue 50 besides yolo.py's YOLOv8n detector: the
YOLOv8n segmenter (yolov8n-seg.yaml: Segment head, output0 [B, 4+80+32,
anchors] beside the mask prototypes output1 [B, 32, H/4, W/4]) and a newer
detector (yolo11n.yaml: C3k2 blocks, C2PSA attention, depthwise class branch) and the newest
(yolo26n.yaml, exported as Ultralytics exports it by default here: output0 [B, 84, anchors], no
end-to-end top-k), and the same exported end to end (nms=False: its one-to-one head and top-k
in the graph, output0 [B, 300, 6]).
Built offline from the yaml as yolo.py builds YOLOv8n (random weights,
YOLO_OFFLINE=1, BatchNorm statistics measured on [0, 1] images, heads spread
like a trained one's), exported by Ultralytics itself (dynamic=True), 320x320.

    <group>/ultra.onnx        YOLO(yaml).export(format='onnx', dynamic=True)
    <group>/ultra_deep.onnx   the same with one deep backbone conv's weight x1.05
    <group>/dump/             parity.torch's dump of the model as exported (head.export)
    yolo_seg/ultra_proto.onnx, ultra_coef.onnx   faults in the mask prototypes (output1 alone)
                              and in the mask coefficients (32 rows of output0)
"""

import os
import shutil

import torch

from . import yolo
from .common import calibrate_batchnorm, images, working_dir, write_dump

SIZE = yolo.SIZE
# (yaml, the conv a planted fault scales, its block: the module a verdict must name)
MODELS = {
    "yolo_seg": ("yolov8n-seg.yaml", "model.4.m.1.cv1.conv", "model.4.m.1.cv1"),
    "yolo11": ("yolo11n.yaml", "model.6.m.0.cv1.conv", "model.6.m.0.cv1"),
    "yolo26": ("yolo26n.yaml", "model.6.m.0.cv1.conv", "model.6.m.0.cv1"),
    "yolo26_e2e": ("yolo26n.yaml", "model.6.m.0.cv1.conv", "model.6.m.0.cv1"),
}
# end to end: export(nms=False) keeps YOLO26's one-to-one head and its top-k in the graph,
# output0 [B, 300, 6] (x1, y1, x2, y2, score, class), ranked by score: a set, not an array
END2END = {"yolo26_e2e"}


# further planted faults: group -> [(file stem, convs scaled, factor, the module a verdict must name)]
EXTRA_FAULTS = {
    "yolo_seg": [
        # the mask prototypes alone (output1): output0 is untouched
        ("ultra_proto", ["model.22.proto.cv2.conv"], 1.05, "model.22.proto.cv2"),
        # the mask coefficients of the finest level: 32 of output0's 116 rows, beside boxes in pixels
        ("ultra_coef", ["model.22.cv4.0.2"], 1.1, "model.22.cv4.0.2"),
    ],
}


def head_index(model):
    return len(model.model) - 1


def build_model(yaml):
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO
    torch.manual_seed(0)
    model = YOLO(yaml, verbose=False)
    calibrate_batchnorm(model.model, [images(2, SIZE, seed=10 + k) for k in range(3)])
    h = head_index(model.model)
    head = model.model.model[h]
    yolo._spread(model.model, [f"model.{h}.cv3.{i}.{len(head.cv3[i]) - 1}" for i in range(head.nl)], 1.5, -6.0)
    yolo._spread(model.model, [f"model.{h}.cv2.{i}.{len(head.cv2[i]) - 1}" for i in range(head.nl)], 0.5, None)
    if getattr(head, "one2one_cv3", None) is not None:  # YOLO26's one-to-one head, what end2end runs
        yolo._spread(model.model, [f"model.{h}.one2one_cv3.{i}.{len(head.one2one_cv3[i]) - 1}"
                                   for i in range(head.nl)], 1.5, -6.0)
        yolo._spread(model.model, [f"model.{h}.one2one_cv2.{i}.{len(head.one2one_cv2[i]) - 1}"
                                   for i in range(head.nl)], 0.5, None)
    return model


def ultralytics_export(model, path, end2end=False):
    """YOLO.export(format='onnx', dynamic=True) as the docs say, with nms=False
    for the end-to-end head (yolo.ultralytics_export otherwise)."""
    if not end2end:
        return yolo.ultralytics_export(model, path)
    with working_dir():
        produced = model.export(format="onnx", dynamic=True, imgsz=SIZE, nms=False, verbose=False)
        shutil.move(str(produced), path)


def build(out, group):
    yaml, conv, _ = MODELS[group]
    e2e = group in END2END
    model = build_model(yaml)
    x = images(1, SIZE, seed=0)
    ultralytics_export(model, os.path.join(out, "ultra.onnx"), e2e)
    ultralytics_export(yolo.with_fault(model, [conv], 1.05), os.path.join(out, "ultra_deep.onnx"), e2e)
    for stem, convs, factor, _ in EXTRA_FAULTS.get(group, []):
        ultralytics_export(yolo.with_fault(model, convs, factor), os.path.join(out, f"{stem}.onnx"), e2e)
    exported = yolo.as_exported(model.model)
    if e2e:
        exported.model[-1].end2end = True
    with torch.no_grad():
        y = exported(x)
    outs = list(y) if isinstance(y, (tuple, list)) else [y]
    names = [f"output{k}" for k in range(len(outs))]
    write_dump(exported, (x,), os.path.join(out, "dump"), ["images"], names)
    head = model.model.model[head_index(model.model)]
    facts = {"yaml": yaml, "head": type(head).__name__, "end2end": e2e, "classes": int(head.nc),
             "outputs": {n: list(o.shape) for n, o in zip(names, outs)}}
    if e2e:  # [B, k, 6]: boxes, score, class
        scores = outs[0][0, :, 4].sort(descending=True).values
        facts.update(box_absmax=float(outs[0][..., :4].abs().max()), score_max=float(scores[0]),
                     smallest_score_gap=float((scores[:-1] - scores[1:]).min()))
    else:
        facts.update(box_absmax=float(outs[0][:, :4].abs().max()), score_max=float(outs[0][:, 4:4 + head.nc].max()))
    return facts
