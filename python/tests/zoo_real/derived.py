"""Derived copies of a float ONNX model, made with ONNX Runtime's own tools as
users make them: int8 static QDQ (per tensor, per channel), int8 dynamic,
fp16; plus the measurements that say whether a copy is healthy (truth.json),
independent of parity."""

import numpy as np
import onnx

from .common import run_onnx


class _Reader:
    def __init__(self, feeds):
        self._feeds = list(feeds)
        self._it = iter(self._feeds)

    def get_next(self):
        return next(self._it, None)

    def rewind(self):
        self._it = iter(self._feeds)


def quantize_qdq(src, dst, feeds, per_channel=False, exclude=(), only=None):
    """quantize_static, QDQ, uint8 activations, int8 weights (ORT's defaults);
    `exclude` keeps those nodes in float (the recipes' ignored scope), `only`
    quantizes those nodes alone."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(_Reader, CalibrationDataReader):
        pass

    quantize_static(str(src), str(dst), Reader(feeds), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    nodes_to_exclude=list(exclude), nodes_to_quantize=list(only) if only else None)
    return dst


def quantize_dynamic(src, dst):
    from onnxruntime.quantization import QuantType, quantize_dynamic as qd
    qd(str(src), str(dst), weight_type=QuantType.QInt8)
    return dst


def to_fp16(src, dst):
    """onnxruntime.transformers.float16, keep_io_types=True (float32 inputs and
    outputs), then topologically sorted: the converter appends the input Casts
    after the nodes that read them, which ONNX Runtime runs but ONNX's checker
    (and parity's syntax stage) rightly refuses; the zoo's fp16 copies test
    numerics, so they get the order the spec requires."""
    from onnxruntime.transformers.float16 import convert_float_to_float16
    from onnxruntime.transformers.onnx_model import OnnxModel
    model = OnnxModel(convert_float_to_float16(onnx.load(str(src)), keep_io_types=True))
    model.topological_sort()
    onnx.save(model.model, str(dst))
    return dst


def ort_optimized(src, dst, model_type, num_heads, hidden_size):
    """onnxruntime.transformers.optimizer.optimize_model (its fusions into ORT's
    com.microsoft ops: SkipLayerNormalization, BiasGelu,
    SkipSimplifiedLayerNormalization, ...), saved as users save it."""
    from onnxruntime.transformers.optimizer import optimize_model
    optimize_model(str(src), model_type=model_type, num_heads=num_heads, hidden_size=hidden_size,
                   opt_level=0).save_model_to_file(str(dst))
    return dst


def dump_feeds(dump_dir):
    """The feeds of a parity.torch dump's traced sample, keyed by input name."""
    import json
    import os
    with open(os.path.join(dump_dir, "manifest.json"), encoding="utf-8") as f:
        inputs = json.load(f)["inputs"]
    return {k: np.load(os.path.join(dump_dir, rel)) for k, rel in inputs.items()}


def producer_of(path, output):
    """The name of the node that writes graph output `output`."""
    return next(n.name for n in onnx.load(str(path), load_external_data=False).graph.node if output in n.output)


def nodes_under(path, prefix, keep_ops=("Conv",)):
    """Names of the nodes whose name starts with prefix, except ops in keep_ops
    (e.g. a detector head's decode: everything but its convolutions)."""
    return [n.name for n in onnx.load(str(path), load_external_data=False).graph.node
            if n.name.startswith(prefix) and n.op_type not in keep_ops]


def compare_outputs(float_path, derived_path, feeds_list):
    """[(float outputs, derived outputs)] over the samples, by output order."""
    return [(run_onnx(float_path, f), run_onnx(derived_path, f)) for f in feeds_list]


def detector_truth(pairs, boxes=4):
    """What a detector's user sees, for [B, 4+nc, anchors] outputs: box error in
    pixels, class-score error, share of anchors whose best class agrees among
    those where the float model sees one (best score above 0.25 and 0.05 above
    the second), and whether every class score is 0."""
    box_err, score_err, agree, confident, zero = 0.0, 0.0, 0, 0, True
    for ref, got in pairs:
        r, g = ref[0].astype(np.float64), got[0].astype(np.float64)
        box_err = max(box_err, float(np.abs(r[:, :boxes] - g[:, :boxes]).max()))
        score_err = max(score_err, float(np.abs(r[:, boxes:] - g[:, boxes:]).max()))
        top2 = np.sort(r[:, boxes:], axis=1)[:, -2:]
        best = (top2[:, 1] > 0.25) & (top2[:, 1] - top2[:, 0] > 0.05)
        confident += int(best.sum())
        agree += int((r[:, boxes:].argmax(1) == g[:, boxes:].argmax(1))[best].sum())
        zero = zero and not np.any(g[:, boxes:])
    return {"box_max_abs_px": round(box_err, 4), "score_max_abs": round(score_err, 5),
            "best_class_agreement": round(agree / max(confident, 1), 4), "confident_anchors": confident,
            "all_scores_zero": bool(zero)}


def classifier_truth(pairs):
    """Top-1 agreement and the logits' error relative to their spread."""
    agree = rows = 0
    rel = 0.0
    for ref, got in pairs:
        r, g = ref[0].reshape(-1, ref[0].shape[-1]), got[0].reshape(-1, got[0].shape[-1])
        agree += int((r.argmax(-1) == g.argmax(-1)).sum())
        rows += r.shape[0]
        rel = max(rel, float(np.abs(r - g).max() / max(r.std(), 1e-12)))
    return {"top1_agreement": round(agree / max(rows, 1), 4), "rows": rows, "max_abs_over_std": round(rel, 4)}
