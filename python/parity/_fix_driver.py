"""The Python half of `parity fix` (docs/fix.md): re-makes a derived model
with a few nodes kept in float, the way it was made.

- int8: onnxruntime.quantization.quantize_static with `nodes_to_exclude`,
  the settings read from the deployed copy (QDQ or QOperator, per-channel
  weights, the activation and weight types) and every activation quantizer's
  scale and zero point pinned to the deployed copy's (TensorQuantOverrides):
  with nothing excluded the copy is re-made as deployed, so a change that
  passes is the exclusion, not a new calibration.
- float16: onnxruntime.transformers.float16.convert_float_to_float16 with
  `node_block_list`, keep_io_types as the deployed copy has it; the Cast
  pairs it puts between two kept nodes (float -> float16 -> float) removed,
  so that kept nodes in a row exchange float values.

Called by the parity binary (src/engine/fix/derived_fix.cc):
    python -m parity._fix_driver REQUEST.json
REQUEST: {"kind": "int8"|"float16", "float_model", "derived_model", "out",
"exclude": [node names], "calibration": [npz paths]}. The last line on
stdout is a JSON object: {"ok": true, "settings": {...}} or {"ok": false,
"error": "..."}; exit 0 either way, 2 on a malformed request.
"""

import json
import os
import sys


def _initializers(model):
    from onnx import numpy_helper
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def _int8_settings(derived):
    """quantize_static's settings as the deployed copy shows them."""
    ops = {n.op_type for n in derived.graph.node}
    inits = _initializers(derived)
    qdq = "DequantizeLinear" in ops and not ops & {"QLinearConv", "QLinearMatMul"}
    act_type, weight_type, per_channel, pinned = None, None, False, {}
    for n in derived.graph.node:
        if n.op_type == "QuantizeLinear" and n.input[0] not in inits and len(n.input) > 2:
            scale, zp = inits.get(n.input[1]), inits.get(n.input[2])
            if scale is None or zp is None or scale.size != 1:
                continue
            act_type = act_type or zp.dtype.name
            pinned[n.input[0]] = [{"scale": scale.reshape(()), "zero_point": zp.reshape(())}]
        elif n.op_type == "DequantizeLinear" and n.input[0] in inits:
            scale = inits.get(n.input[1])
            if inits[n.input[0]].dtype.name in ("int8", "uint8") and inits[n.input[0]].ndim >= 2:
                weight_type = weight_type or inits[n.input[0]].dtype.name
                per_channel = per_channel or (scale is not None and scale.size > 1)
    return {"format": "QDQ" if qdq else "QOperator", "activation_type": act_type or "uint8",
            "weight_type": weight_type or "int8", "per_channel": per_channel}, pinned


class _Reader:
    def __init__(self, feeds):
        self._feeds = feeds
        self._it = iter(feeds)

    def get_next(self):
        return next(self._it, None)

    def rewind(self):
        self._it = iter(self._feeds)


def _calibration(paths, input_names):
    """Feeds from .npz files: INPUT keys (one sample) or SAMPLE/INPUT keys."""
    import numpy as np
    feeds = []
    for path in paths:
        with np.load(path) as z:
            keys = list(z.keys())
            if all(k in input_names for k in keys):
                feeds.append({k: z[k] for k in keys})
                continue
            samples = {}
            for k in keys:
                sample, _, name = k.partition("/")
                name = name if name in input_names else k if k in input_names else name
                samples.setdefault(sample, {})[name] = z[k]
            feeds += [s for s in samples.values() if set(s) == set(input_names)]
    return feeds


def _int8(req):
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    derived = onnx.load(req["derived_model"], load_external_data=False)
    settings, pinned = _int8_settings(derived)
    float_model = onnx.load(req["float_model"], load_external_data=False)
    inits = {i.name for i in float_model.graph.initializer}
    names = [i.name for i in float_model.graph.input if i.name not in inits]
    feeds = _calibration(req["calibration"], names)
    if not feeds:
        return {"ok": False, "error": "no calibration sample holds every input of the float model (%s)" % ", ".join(names)}

    class Reader(_Reader, CalibrationDataReader):
        pass

    types = {"uint8": QuantType.QUInt8, "int8": QuantType.QInt8}
    quantize_static(req["float_model"], req["out"], Reader(feeds),
                    quant_format=QuantFormat.QDQ if settings["format"] == "QDQ" else QuantFormat.QOperator,
                    activation_type=types[settings["activation_type"]], weight_type=types[settings["weight_type"]],
                    per_channel=settings["per_channel"], nodes_to_exclude=list(req["exclude"]),
                    extra_options={"TensorQuantOverrides": pinned})
    settings.update(pinned_activations=len(pinned), calibration_samples=len(feeds))
    return {"ok": True, "settings": settings}


def _drop_round_trips(model, float_names):
    """The converter keeps a blocked node's computation in float but stores
    its output in float16 (a Cast to float16, then back to float for the next
    blocked node): a value past 65504 still overflows between two kept
    nodes. Each such pair the converter inserted is removed, the tensor keeps
    its name and is float: kept nodes in a row exchange float values."""
    from onnx import NodeProto, TensorProto

    def onnx_copy(n):
        c = NodeProto()
        c.CopyFrom(n)
        return c

    consumers = {}
    for n in model.graph.node:
        for t in n.input:
            consumers.setdefault(t, []).append(n)
    outputs = {o.name for o in model.graph.output}

    def cast_to(n, to):
        return n.op_type == "Cast" and n.name not in float_names and any(a.name == "to" and a.i == to for a in n.attribute)

    nodes = list(model.graph.node)
    produced = {t for n in nodes for t in n.output}
    index = {n.name: i for i, n in enumerate(nodes)}
    drop, rename = set(), {}
    for i, down in enumerate(nodes):
        if not cast_to(down, TensorProto.FLOAT16) or down.output[0] in outputs:
            continue
        ups = consumers.get(down.output[0], [])
        if not ups or not all(cast_to(u, TensorProto.FLOAT) and u.output[0] not in outputs for u in ups):
            continue
        drop.update([i] + [index[u.name] for u in ups])
        if down.input[0] in produced:  # the producer writes the tensor's own name, in float
            rename[down.input[0]] = down.output[0]
            for u in ups:
                rename[u.output[0]] = down.output[0]
        else:  # a graph input: its readers read it
            for u in ups:
                rename[u.output[0]] = down.input[0]
    kept = [onnx_copy(n) for i, n in enumerate(nodes) if i not in drop]
    for n in kept:
        n.input[:] = [rename.get(t, t) for t in n.input]
        n.output[:] = [rename.get(t, t) for t in n.output]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    stale = set(rename.values())
    infos = [v for v in model.graph.value_info if v.name not in stale]
    del model.graph.value_info[:]
    model.graph.value_info.extend(infos)
    return len(drop) // 2


def _float16(req):
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16
    derived = onnx.load(req["derived_model"], load_external_data=False)
    keep_io = all(i.type.tensor_type.elem_type != onnx.TensorProto.FLOAT16 for i in derived.graph.input)
    model = convert_float_to_float16(onnx.load(req["float_model"]), keep_io_types=keep_io,
                                     node_block_list=list(req["exclude"]) or None)
    round_trips = _drop_round_trips(model, {n.name for n in onnx.load(req["float_model"], load_external_data=False).graph.node})
    # keep_io_types puts the input's Cast after its readers: sorted, as the
    # ONNX checker (parity check's syntax stage) wants.
    from onnxruntime.transformers.onnx_model import OnnxModel
    sorted_model = OnnxModel(model)
    sorted_model.topological_sort()
    onnx.save(sorted_model.model, req["out"])
    return {"ok": True, "settings": {"converter": "onnxruntime.transformers.float16", "keep_io_types": keep_io,
                                     "topologically_sorted": True, "float16_round_trips_removed": round_trips}}


def main(argv):
    if len(argv) != 1:
        print(json.dumps({"ok": False, "error": "usage: python -m parity._fix_driver REQUEST.json"}))
        return 2
    with open(argv[0], encoding="utf-8") as f:
        req = json.load(f)
    if os.path.exists(req["out"]):
        print(json.dumps({"ok": False, "error": "%s exists: parity fix never overwrites a file" % req["out"]}))
        return 0
    try:
        result = _int8(req) if req["kind"] == "int8" else _float16(req)
    except Exception as e:  # noqa: BLE001 - the converter's error, reported as one line
        result = {"ok": False, "error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
    sys.stdout.flush()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
