"""The Python half of `parity fix` (docs/fix.md): re-makes a derived model
with a few nodes kept in float, the way it was made.

- int8: onnxruntime.quantization.quantize_static with `nodes_to_exclude`,
  the settings read from the deployed copy (QDQ or QOperator, per-channel
  weights, the activation and weight types) and every activation quantizer's
  scale and zero point pinned to the deployed copy's (TensorQuantOverrides):
  with nothing excluded the copy is re-made as deployed, so a change that
  passes is the exclusion, not a new calibration.
- float16: onnxruntime.transformers.float16.convert_float_to_float16 with
  `node_block_list`, keep_io_types as the deployed copy has it.

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


def _float16(req):
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16
    derived = onnx.load(req["derived_model"], load_external_data=False)
    keep_io = all(i.type.tensor_type.elem_type != onnx.TensorProto.FLOAT16 for i in derived.graph.input)
    model = convert_float_to_float16(onnx.load(req["float_model"]), keep_io_types=keep_io,
                                     node_block_list=list(req["exclude"]) or None)
    onnx.save(model, req["out"])
    return {"ok": True, "settings": {"converter": "onnxruntime.transformers.float16", "keep_io_types": keep_io}}


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
