"""The zoo's build groups: each writes its files into its own folder of the
cache (cache.py) and returns facts for its stamp (truth of derived copies)."""

import copy
import os

from . import derived, detection, hf, trained, ultra, vision, yolo
from .common import export_and_dump, images, scale_parameters

EXPORTERS = ("torchscript", "dynamo")


def build_yolo(out):
    facts = yolo.build(out)
    facts["derived"] = yolo.build_derived(out)
    return facts


def _both(model, args, out, exporters=EXPORTERS, **kwargs):
    """The model through both exporters: out/<exporter>.onnx + <exporter>_dump/;
    an exporter that fails is a fact, not an error."""
    facts = {}
    for exporter in exporters:
        try:
            export_and_dump(model, args, out, exporter, exporter=exporter, **kwargs)
            facts[exporter] = "ok"
        except Exception as e:  # noqa: BLE001 -- recorded: that exporter cannot make this model
            facts[exporter] = f"failed: {str(e).splitlines()[0][:300] if str(e) else type(e).__name__}"
    return facts


def build_mobilenet(out):
    """torchvision mobilenet_v3_small (TorchScript export) and its static int8
    QDQ copies, per tensor and per channel, calibrated on [0, 1] images."""
    model, args = hf.mobilenet()
    facts = _both(model, args, out, input_names=["images"], output_names=["logits"])
    src = os.path.join(out, "torchscript.onnx")
    calib = [{"images": images(1, 96, seed=100 + k).numpy()} for k in range(8)]
    test = [{"images": images(1, 96, seed=200 + k).numpy()} for k in range(8)]
    made = {"int8_tensor": derived.quantize_qdq(src, os.path.join(out, "int8_tensor.onnx"), calib),
            "int8_channel": derived.quantize_qdq(src, os.path.join(out, "int8_channel.onnx"), calib,
                                                 per_channel=True)}
    facts["derived"] = {k: derived.classifier_truth(derived.compare_outputs(src, p, test)) for k, p in made.items()}
    return facts


def build_vit(out):
    """transformers ViT classifier (2 layers, hidden 64, 64x64 images, 100
    labels): both exporters, a dynamic int8 and an fp16 copy."""
    model, args = hf.vit()
    facts = _both(model, args, out, input_names=["pixel_values"], output_names=["logits"])
    src = os.path.join(out, "torchscript.onnx")
    test = [{"pixel_values": images(1, 64, seed=200 + k).numpy()} for k in range(8)]
    made = {"int8_dynamic": derived.quantize_dynamic(src, os.path.join(out, "int8_dynamic.onnx")),
            "fp16": derived.to_fp16(src, os.path.join(out, "fp16.onnx")),
            "ortopt": derived.ort_optimized(src, os.path.join(out, "ortopt.onnx"), "vit", 4, 64)}
    facts["derived"] = {k: derived.classifier_truth(derived.compare_outputs(src, p, test)) for k, p in made.items()}
    return facts


LLAMA_FAULT = "model.layers.1.self_attn.v_proj"


def build_llama(out):
    """A Llama decode step with an explicit KV cache, both exporters, and the
    same step with v_proj of layer 1 x1.02 (each exporter's file)."""
    model, args = hf.llama_decode()
    kw = {"input_names": hf.LLAMA_INPUTS, "output_names": hf.LLAMA_OUTPUTS}
    facts = _both(model, args, out, **kw)
    # A left-padded batch of two, exported and dumped at that batch (healthy).
    try:
        export_and_dump(model, hf.padded_decode_inputs(model, model.config), out, "padded", exporter="torchscript",
                        **kw)
        facts["padded"] = "ok"
    except Exception as e:  # noqa: BLE001 -- recorded, as _both does
        facts["padded"] = f"failed: {str(e).splitlines()[0][:300] if str(e) else type(e).__name__}"
    faulty = copy.deepcopy(model)
    scale_parameters(faulty, [LLAMA_FAULT], 1.02)
    from parity.torch.exporter import export
    for exporter in EXPORTERS:
        if facts[exporter] == "ok":
            export(faulty, args, os.path.join(out, f"{exporter}_vproj.onnx"), exporter=exporter, **kw)
    src = os.path.join(out, "torchscript.onnx")
    opt = derived.ort_optimized(src, os.path.join(out, "ortopt.onnx"), "gpt2", hf.HEADS, hf.HIDDEN)
    feeds = [derived.dump_feeds(os.path.join(out, "torchscript_dump"))]
    facts["derived"] = {"ortopt": derived.classifier_truth(derived.compare_outputs(src, opt, feeds))}
    return facts


def build_whisper(out):
    model, args = hf.whisper_encoder()
    return _both(model, args, out, input_names=["input_features"], output_names=["last_hidden_state"])


def build_convnext(out):
    model, args = hf.convnext()
    return _both(model, args, out, input_names=["images"], output_names=["logits"])


def build_ssdlite(out):
    """torchvision SSDlite320 with NMS in the graph (20 detections kept).
    TorchScript only: torch 2.14's dynamo exporter refuses the NMS's
    data-dependent sizes (GuardOnDataDependentSymNode), after a minute."""
    model, args = detection.ssdlite()
    return _both(model, args, out, exporters=("torchscript",), input_names=["images"],
                 output_names=["boxes", "scores", "labels"])


def _faulty_exports(model, args, out, facts, conv, factor=1.05, name="deep", **kwargs):
    """<exporter>_<name>.onnx: the model with `conv`'s weight x factor, through
    each exporter that made the healthy file (the healthy dump is the reference)."""
    from parity.torch.exporter import export
    faulty = copy.deepcopy(model)
    facts["planted"] = scale_parameters(faulty, [conv], factor)
    for exporter in EXPORTERS:
        if facts.get(exporter) == "ok":
            export(faulty, args, os.path.join(out, f"{exporter}_{name}.onnx"), exporter=exporter, **kwargs)
    return facts


def build_efficientnet(out):
    """torchvision efficientnet_b0 (SE blocks, SiLU), 96x96, both exporters, and
    a depthwise conv of stage 6 x1.05 (each exporter's file)."""
    model, args = vision.efficientnet_b0()
    kw = {"input_names": ["images"], "output_names": ["logits"]}
    return _faulty_exports(model, args, out, _both(model, args, out, **kw), vision.EFFICIENTNET_FAULT[0], **kw)


def build_mobilenet_v2(out):
    """torchvision mobilenet_v2 (inverted residuals, ReLU6), 96x96, both
    exporters, and a depthwise conv of block 13 x1.05."""
    model, args = vision.mobilenet_v2()
    kw = {"input_names": ["images"], "output_names": ["logits"]}
    return _faulty_exports(model, args, out, _both(model, args, out, **kw), vision.MOBILENET_V2_FAULT[0], **kw)


def build_lraspp(out):
    """torchvision lraspp_mobilenet_v3_large (segmentation, 6 classes), 128x128,
    both exporters, and a backbone depthwise conv x1.05."""
    model, args = vision.lraspp()
    kw = {"input_names": ["images"], "output_names": ["out"]}
    return _faulty_exports(model, args, out, _both(model, args, out, **kw), vision.LRASPP_FAULT[0], **kw)


def build_yolo_seg(out):
    return ultra.build(out, "yolo_seg")


def build_yolo11(out):
    return ultra.build(out, "yolo11")


def build_yolo26(out):
    return ultra.build(out, "yolo26")


def build_yolo26_e2e(out):
    return ultra.build(out, "yolo26_e2e")


def build_trained(out):
    """A TinyNet trained for a few seconds on separable synthetic images
    (trained.py): its TorchScript export (dynamic batch) with a dump; static
    int8 QDQ per channel calibrated on training images (healthy) and on images
    dimmed x0.1 (its input quantizer clips: unhealthy); an fp16 copy; the Cast-only edit and
    the same edit with the second conv's weight x1.005."""
    model, facts = trained.train()
    x = images(1, trained.SIZE, seed=0)
    kw = {"input_names": ["images"], "output_names": ["logits"],
          "dynamic_axes": {"images": {0: "batch"}, "logits": {0: "batch"}}}
    facts.update(_both(model, (x,), out, exporters=("torchscript",), **kw))
    src = os.path.join(out, "torchscript.onnx")
    made = {"int8_channel": derived.quantize_qdq(src, os.path.join(out, "int8_channel.onnx"),
                                                 trained.calibration(), per_channel=True),
            "int8_clipped": derived.quantize_qdq(src, os.path.join(out, "int8_clipped.onnx"),
                                                 trained.calibration(scale=0.1), per_channel=True)}
    made["fp16"] = derived.to_fp16(src, os.path.join(out, "fp16.onnx"))
    facts["cast_edit"] = trained.cast_edit(src, os.path.join(out, "cast_edit.onnx"))
    facts["cast_edit_fault"] = trained.cast_edit(src, os.path.join(out, "cast_edit_fault.onnx"), fault=(1, 1.005))
    made["cast_edit"] = os.path.join(out, "cast_edit.onnx")
    made["cast_edit_fault"] = os.path.join(out, "cast_edit_fault.onnx")
    hx, hy = trained.held_out()
    feeds = [{"images": hx}]
    facts["derived"] = {}
    for k, p in made.items():
        truth = derived.classifier_truth(derived.compare_outputs(src, p, feeds))
        truth["accuracy_held_out"] = trained.accuracy(p, hx, hy)
        facts["derived"][k] = truth
    return facts


GROUPS = {
    "yolo": build_yolo,
    "mobilenet": build_mobilenet,
    "vit": build_vit,
    "llama": build_llama,
    "whisper": build_whisper,
    "convnext": build_convnext,
    "ssdlite": build_ssdlite,
    "efficientnet": build_efficientnet,
    "mobilenet_v2": build_mobilenet_v2,
    "lraspp": build_lraspp,
    "yolo_seg": build_yolo_seg,
    "yolo11": build_yolo11,
    "yolo26": build_yolo26,
    "yolo26_e2e": build_yolo26_e2e,
    "trained": build_trained,
}
