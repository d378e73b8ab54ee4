"""The real exporters' zoo's cases: each is a command a user runs on a model
of the cache (groups.py) and the verdict that is TRUE for it.

kind "torch":   parity check MODEL --torch DUMP  (and parity locate MODEL --reference torch:DUMP)
kind "derived": parity check MODEL --reference-model FLOAT

A healthy export computes what PyTorch computes: PASS. A planted fault (a
weight scaled in PyTorch before export; the dump is of the healthy module)
must FAIL, naming the planted module (`planted`: the named module must be it
or inside it). A derived copy's expected verdict is read from its truth
(derived.py, measured with ONNX Runtime on images the check does not see):
healthy when a user of its outputs would not notice (expected_from_truth).
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    group: str
    kind: str                 # "torch" | "derived"
    model: str                # file in the group's folder
    reference: str            # the dump folder (torch) or the float model (derived)
    expected: str = None      # "PASS" | "FAIL"; None: from the truth of a derived copy
    planted: str = None       # the module a planted fault must be named at
    fp32_fault: bool = False  # a fault in fp32 weights: no bf16/fp16/tf32 arithmetic may be named
    about: str = ""
    locate_expected: str = None  # locate's verdict where it differs (it judges the dump's traced sample only)
    in_test: bool = True      # False: the scoreboard's only (test_zoo_real.py keeps its CI cost in minutes)
    min_top1: float = None    # a TRAINED classifier's derived copy: healthy when top-1 agrees this often

    @property
    def no_arithmetic(self):
        """bf16/fp16/tf32 may not be named: an fp32 weight fault, or a derived
        copy (int8, fp16, optimized), which knows what it is."""
        return self.fp32_fault or self.kind == "derived"


def _torch(name, group, model, dump, expected="PASS", planted=None, about="", locate_expected=None):
    return Case(name, group, "torch", model, dump, expected, planted, planted is not None, about, locate_expected)


def _derived(name, group, model, reference, about="", in_test=True, expected=None, min_top1=None, fp32_fault=False):
    return Case(name, group, "derived", model, reference, expected, None, fp32_fault, about, in_test=in_test,
                min_top1=min_top1)


def _family(group, what, fault, exporters=("torchscript", "dynamo"), in_test=True):
    """A torchvision family's healthy export and planted fault, per exporter."""
    out = []
    for k, exporter in enumerate(exporters):
        out.append(Case(f"{group}_{exporter}", group, "torch", f"{exporter}.onnx", f"{exporter}_dump", "PASS",
                        about=what if k == 0 else "", in_test=in_test))
        out.append(Case(f"{group}_{exporter}_deep", group, "torch", f"{exporter}_deep.onnx", f"{exporter}_dump",
                        "FAIL", fault, True, f"{fault} conv weight x1.05 ({exporter})", in_test=in_test))
    return out


DEEP = "model.4.m.1.cv1"
TRAINED_MIN_TOP1 = 0.98   # a trained classifier's int8 copy is healthy when its top-1 agrees on 98% of held-out images
CASES = [
    _torch("yolo_ultra", "yolo", "ultra.onnx", "dump", about="Ultralytics export (dynamic=True) vs the module's dump"),
    _torch("yolo_ultra_wrapped", "yolo", "ultra.onnx", "dump_wrapped",
           about="the same export vs the module behind a one-line wrapper (model.model.*)"),
    _torch("yolo_ultra_deep", "yolo", "ultra_deep.onnx", "dump", "FAIL", DEEP, "model.4.m.1.cv1 weight x1.05"),
    _torch("yolo_ultra_deep_wrapped", "yolo", "ultra_deep.onnx", "dump_wrapped", "FAIL", "model." + DEEP,
           "the deep fault, dump behind the wrapper"),
    _torch("yolo_ultra_cls3", "yolo", "ultra_cls3.onnx", "dump", "FAIL", "model.22.cv3",
           "class-branch output convs x3: the scores (<= 1) beside boxes in pixels"),
    _torch("yolo_dynamo", "yolo", "dynamo.onnx", "dynamo_dump",
           about="dynamo export of the plain eval module (tuple output), Detect.dynamic"),
    _torch("yolo_dynamo_fixed", "yolo", "dynamo_fixed.onnx", "dynamo_fixed_dump", "FAIL",
           about="the same without Detect.dynamic: the export refuses sizes PyTorch takes (a true FAIL; "
                 "locate judges the traced size only, where it is right)", locate_expected="PASS"),
    _torch("yolo_dynamo_deep", "yolo", "dynamo_deep.onnx", "dynamo_dump", "FAIL", DEEP,
           "dynamo export with the deep fault"),
    _torch("yolo_guide", "yolo", "guide.onnx", "guide_dump",
           about="TorchScript export, guide-style height/width labels on maps of other sizes"),
    _derived("yolo_int8_saturated", "yolo", "int8_saturated.onnx", "ultra.onnx",
             "quantize_static QDQ as documented: one scale for boxes and scores"),
    _derived("yolo_int8_concat", "yolo", "int8_concat.onnx", "ultra.onnx",
             "quantize_static QDQ of the output Concat alone: boxes within 1.25 px, every score 0"),
    _derived("yolo_int8_tensor", "yolo", "int8_tensor.onnx", "ultra.onnx",
             "quantize_static QDQ per tensor, head decode kept in float", in_test=False),
    _derived("yolo_int8_channel", "yolo", "int8_channel.onnx", "ultra.onnx",
             "quantize_static QDQ per channel, head decode kept in float", in_test=False),
    _derived("yolo_fp16", "yolo", "fp16.onnx", "ultra.onnx", "float16 converter, keep_io_types"),
    _torch("mobilenet_torchscript", "mobilenet", "torchscript.onnx", "torchscript_dump",
           about="torchvision mobilenet_v3_small, 96x96"),
    _torch("mobilenet_dynamo", "mobilenet", "dynamo.onnx", "dynamo_dump"),
    _derived("mobilenet_int8_tensor", "mobilenet", "int8_tensor.onnx", "torchscript.onnx",
             "quantize_static QDQ per tensor"),
    _derived("mobilenet_int8_channel", "mobilenet", "int8_channel.onnx", "torchscript.onnx",
             "quantize_static QDQ per channel"),
    _torch("vit_torchscript", "vit", "torchscript.onnx", "torchscript_dump",
           about="transformers ViT classifier, 2 layers, 64x64"),
    _torch("vit_dynamo", "vit", "dynamo.onnx", "dynamo_dump"),
    _derived("vit_int8_dynamic", "vit", "int8_dynamic.onnx", "torchscript.onnx", "quantize_dynamic int8"),
    _derived("vit_fp16", "vit", "fp16.onnx", "torchscript.onnx", "float16 converter, keep_io_types"),
    _derived("vit_ortopt", "vit", "ortopt.onnx", "torchscript.onnx",
             "ORT transformers optimizer (SkipLayerNormalization, BiasGelu)"),
    _torch("llama_torchscript", "llama", "torchscript.onnx", "torchscript_dump",
           about="Llama decode step, explicit KV cache (past 12)"),
    _torch("llama_dynamo", "llama", "dynamo.onnx", "dynamo_dump"),
    _torch("llama_padded", "llama", "padded.onnx", "padded_dump",
           about="the decode step on a left-padded batch of two (mask zeros in row 0's past, positions from its "
                 "first real token), TorchScript"),
    _torch("llama_torchscript_vproj", "llama", "torchscript_vproj.onnx", "torchscript_dump", "FAIL",
           "model.layers.1.self_attn.v_proj", "v_proj of layer 1 x1.02"),
    _torch("llama_dynamo_vproj", "llama", "dynamo_vproj.onnx", "dynamo_dump", "FAIL",
           "model.layers.1.self_attn.v_proj", "v_proj of layer 1 x1.02"),
    _derived("llama_ortopt", "llama", "ortopt.onnx", "torchscript.onnx",
             "ORT transformers optimizer (SkipSimplifiedLayerNormalization)"),
    _torch("whisper_torchscript", "whisper", "torchscript.onnx", "torchscript_dump",
           about="transformers Whisper encoder, 2 layers, 100 frames"),
    _torch("whisper_dynamo", "whisper", "dynamo.onnx", "dynamo_dump"),
    _torch("convnext_torchscript", "convnext", "torchscript.onnx", "torchscript_dump",
           about="timm convnext_atto, 64x64"),
    _torch("convnext_dynamo", "convnext", "dynamo.onnx", "dynamo_dump"),
    _torch("ssdlite_torchscript", "ssdlite", "torchscript.onnx", "torchscript_dump",
           about="torchvision ssdlite320_mobilenet_v3_large with NMS in the graph"),
    # issue 50's families: SE/SiLU and ReLU6 classifiers, a segmentation head (torchvision builders, random
    # weights), Ultralytics' segmenter and a newer detector, a trained classifier's int8 copies, a Cast-only edit
    *_family("efficientnet", "torchvision efficientnet_b0 (SE, SiLU), 96x96", "features.6.1.block.1"),
    *_family("mobilenet_v2", "torchvision mobilenet_v2 (ReLU6), 96x96", "features.13.conv.1"),
    *_family("lraspp", "torchvision lraspp_mobilenet_v3_large segmentation, 128x128, 6 classes",
             "model.backbone.12.block.1"),
    _torch("yolo_seg_ultra", "yolo_seg", "ultra.onnx", "dump",
           about="Ultralytics YOLOv8n-seg export (dynamic=True): boxes, scores, mask coefficients; prototypes"),
    _torch("yolo_seg_ultra_deep", "yolo_seg", "ultra_deep.onnx", "dump", "FAIL", "model.4.m.1.cv1",
           "YOLOv8n-seg, model.4.m.1.cv1 weight x1.05"),
    _torch("yolo_seg_ultra_proto", "yolo_seg", "ultra_proto.onnx", "dump", "FAIL", "model.22.proto.cv2",
           "YOLOv8n-seg, mask prototypes' conv x1.05 (output1 alone)"),
    _torch("yolo_seg_ultra_coef", "yolo_seg", "ultra_coef.onnx", "dump", "FAIL", "model.22.cv4.0.2",
           "YOLOv8n-seg, mask coefficients' conv x1.1 (32 rows of output0, beside boxes in pixels)"),
    _torch("yolo11_ultra", "yolo11", "ultra.onnx", "dump", about="Ultralytics YOLO11n export (dynamic=True)"),
    _torch("yolo11_ultra_deep", "yolo11", "ultra_deep.onnx", "dump", "FAIL", "model.6.m.0.cv1",
           "YOLO11n, model.6.m.0.cv1 weight x1.05"),
    _torch("yolo26_ultra", "yolo26", "ultra.onnx", "dump",
           about="Ultralytics YOLO26n export (dynamic=True; its default: no end-to-end top-k)"),
    _torch("yolo26_ultra_deep", "yolo26", "ultra_deep.onnx", "dump", "FAIL", "model.6.m.0.cv1",
           "YOLO26n, model.6.m.0.cv1 weight x1.05"),
    _torch("yolo26_e2e_ultra", "yolo26_e2e", "ultra.onnx", "dump",
           about="YOLO26n exported end to end (nms=False): top-300 detections [B, 300, 6] ranked by score"),
    _torch("yolo26_e2e_ultra_deep", "yolo26_e2e", "ultra_deep.onnx", "dump", "FAIL", "model.6.m.0.cv1",
           "YOLO26n end to end, model.6.m.0.cv1 weight x1.05"),
    _torch("trained_torchscript", "trained", "torchscript.onnx", "torchscript_dump",
           about="a CNN trained for seconds on separable synthetic 32x32 images (dynamic batch)"),
    _derived("trained_int8_channel", "trained", "int8_channel.onnx", "torchscript.onnx",
             "its quantize_static QDQ per channel, calibrated on training images", min_top1=TRAINED_MIN_TOP1),
    _derived("trained_int8_clipped", "trained", "int8_clipped.onnx", "torchscript.onnx",
             "the same calibrated on images dimmed x0.1: the input quantizer clips", min_top1=TRAINED_MIN_TOP1),
    _derived("trained_fp16", "trained", "fp16.onnx", "torchscript.onnx", "its float16 converter copy, keep_io_types",
             min_top1=TRAINED_MIN_TOP1),
    _derived("trained_cast_edit", "trained", "cast_edit.onnx", "torchscript.onnx",
             "Cast-only edit: an int64 -> int64 Cast on the Reshape's shape (float32 kept)", expected="PASS"),
    _derived("trained_cast_edit_fault", "trained", "cast_edit_fault.onnx", "torchscript.onnx",
             "the Cast-only edit with the second conv's weight x1.005", expected="FAIL", fp32_fault=True),
]
BY_NAME = {c.name: c for c in CASES}

# A derived copy is healthy when a user of its outputs would not notice:
# classifier logits off by at most a quarter of their spread; a detector's boxes
# off by at most 2% of their scale, its best class kept on 95% of the anchors
# that show one, and some class score left.
CLASSIFIER_MAX_ERROR_OVER_STD = 0.25
DETECTOR_MAX_BOX_ERROR = 0.02
DETECTOR_MIN_AGREEMENT = 0.95


def truth_of(case, stamps):
    """The measured truth of a derived case (derived.py), or None."""
    if case.kind != "derived":
        return None
    facts = (stamps.get(case.group) or {}).get("facts") or {}
    key = case.model[:-len(".onnx")]
    return (facts.get("derived") or {}).get(key)


def expected_of(case, stamps):
    if case.expected is not None:
        return case.expected
    truth = truth_of(case, stamps)
    if truth is None:
        return None
    if case.min_top1 is not None:
        healthy = truth["top1_agreement"] >= case.min_top1
    elif "top1_agreement" in truth:
        healthy = truth["max_abs_over_std"] <= CLASSIFIER_MAX_ERROR_OVER_STD
    else:
        box_scale = (stamps[case.group]["facts"] or {}).get("box_absmax", 1.0)
        healthy = (not truth["all_scores_zero"] and truth["box_max_abs_px"] <= DETECTOR_MAX_BOX_ERROR * box_scale
                   and truth["best_class_agreement"] >= DETECTOR_MIN_AGREEMENT)
    return "PASS" if healthy else "FAIL"
