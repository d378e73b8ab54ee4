"""The benchmark's models (built from code, random weights), their exports and planted faults."""

import json
import os
import time

import numpy as np

# --------------------------------------------------------------------------------------------
# models


def _tokens(vocab, seq=32, seed=0):
    import torch
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (1, seq), generator=g)
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[0, -4:] = 0
    return ids, mask


def build(name):
    """(model, args, export kwargs) deterministically, random weights, nothing downloaded."""
    import torch
    from zoo import zoo_models
    torch.manual_seed(0)
    if name in ("resnet50", "mobilenet_v3_small"):
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        args = (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0)),)
        kw = dict(input_names=["images"], output_names=["logits"])
    elif name == "bert_base":
        from transformers import BertConfig, BertModel

        class BertForExport(BertModel):
            def forward(self, input_ids, attention_mask):
                return super().forward(input_ids=input_ids, attention_mask=attention_mask)
        cfg = BertConfig()  # bert-base: 12 layers, hidden 768, vocab 30522
        model = BertForExport(cfg, add_pooling_layer=True)
        args = _tokens(cfg.vocab_size)
        kw = dict(input_names=["input_ids", "attention_mask"],
                  output_names=["last_hidden_state", "pooler_output"])
    elif name == "gpt2_small":
        from transformers import GPT2Config, GPT2LMHeadModel

        class GPT2ForExport(GPT2LMHeadModel):
            def forward(self, input_ids, attention_mask):
                return super().forward(input_ids=input_ids, attention_mask=attention_mask)
        cfg = GPT2Config(use_cache=False)  # gpt2 small: 12 layers, n_embd 768, vocab 50257
        model = GPT2ForExport(cfg)
        args = _tokens(cfg.vocab_size)
        kw = dict(input_names=["input_ids", "attention_mask"], output_names=["logits"])
    elif name == "yolo_like":
        from zoo import models
        model = models.YoloLike()
        args = tuple(models.YoloLike.make_inputs(0, batch=1, height=256, width=320))
        kw = dict(input_names=["images"], output_names=["p3", "p4", "p5"],
                  dynamic_axes={"images": {0: "batch", 2: "height", 3: "width"}})
    else:
        raise SystemExit(f"unknown model {name}")
    zoo_models._randomize_norm_statistics(model)
    model.eval()
    return model, args, kw


def do_export(name, d):
    """model.onnx + dump/ + inputs.npz + poly_inputs.json + torch_outputs.json in d."""
    import parity.torch
    from zoo.cache import _write_inputs
    from polygraphy.comparator import IterationResult, RunResults
    from polygraphy.json import save_json
    os.makedirs(d, exist_ok=True)
    model, args, kw = build(name)
    t0 = time.perf_counter()
    rec = parity.torch.export(model, args, os.path.join(d, "model.onnx"), dump_dir=os.path.join(d, "dump"),
                              exporter="dynamo", force=True, **kw)  # d is this benchmark's own: a rerun replaces it
    secs = time.perf_counter() - t0
    _write_inputs(d)
    feed = dict(np.load(os.path.join(d, "inputs.npz")))
    save_json([feed], os.path.join(d, "poly_inputs.json"))
    man = json.load(open(os.path.join(d, "dump", "manifest.json")))
    outs = {k: np.load(os.path.join(d, "dump", v)) for k, v in man["outputs"].items()}
    rr = RunResults()
    rr.add([IterationResult(outputs=outs, runner_name="torch")], runner_name="torch")
    rr.save(os.path.join(d, "torch_outputs.json"))
    json.dump({"export_s": round(secs, 1), "opset": rec.get("onnx_opset"),
               "weights_mb": round(_weights_bytes(os.path.join(d, "model.onnx")) / 1e6, 1)},
              open(os.path.join(d, "export.json"), "w"))


def _weights_bytes(path):
    import onnx
    m = onnx.load(path)
    return sum(int(np.prod(t.dims)) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
               for t in m.graph.initializer)


# --------------------------------------------------------------------------------------------
# planted faults (in the exported ONNX: an exporter bug as the user would meet it)


def _scopes(node):
    for p in node.metadata_props:
        if p.key == "pkg.torch.onnx.name_scopes":
            try:
                return json.loads(p.value)
            except ValueError:
                return [p.value]
    return []


def plant_faults(d):
    """faults/<kind>.onnx and faults.json: the planted node, its module scope."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(os.path.join(d, "model.onnx"))
    inits = {t.name: t for t in m.graph.initializer}
    nodes = list(m.graph.node)
    out = {}
    os.makedirs(os.path.join(d, "faults"), exist_ok=True)
    # weight x1.01: the weight of the compute node nearest the middle of the graph
    cands = [i for i, n in enumerate(nodes) if n.op_type in ("Conv", "MatMul", "Gemm")
             and any(x in inits and len(inits[x].dims) >= 2 for x in n.input)]
    if cands:
        i = min(cands, key=lambda k: abs(k - len(nodes) // 2))
        n = nodes[i]
        w = next(x for x in n.input if x in inits and len(inits[x].dims) >= 2)
        users = [u.name for u in nodes if w in u.input]
        f = onnx.load(os.path.join(d, "model.onnx"))
        t = next(t for t in f.graph.initializer if t.name == w)
        t.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(t) * np.float32(1.01)).astype(np.float32), w))
        onnx.save(f, os.path.join(d, "faults", "weight.onnx"))
        out["weight"] = {"node": n.name, "op_type": n.op_type, "initializer": w, "users": users,
                         "scopes": _scopes(n), "tensor": n.output[0], "what": f"{w} x1.01 ({n.op_type})"}
    # Relu -> LeakyRelu(0.01) at the Relu nearest the middle
    cands = [i for i, n in enumerate(nodes) if n.op_type == "Relu"]
    if cands:
        i = min(cands, key=lambda k: abs(k - len(nodes) // 2))
        f = onnx.load(os.path.join(d, "model.onnx"))
        n = f.graph.node[i]
        n.op_type = "LeakyRelu"
        n.attribute.append(onnx.helper.make_attribute("alpha", 0.01))
        onnx.save(f, os.path.join(d, "faults", "leakyrelu.onnx"))
        out["leakyrelu"] = {"node": n.name, "op_type": "Relu", "scopes": _scopes(n), "tensor": n.output[0],
                            "what": f"{n.name}: Relu -> LeakyRelu(0.01)"}
    json.dump(out, open(os.path.join(d, "faults.json"), "w"), indent=1)
