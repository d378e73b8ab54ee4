"""Builds the models scripts/gpu-check.sh measures on a GPU (issue 44).

    .venv/bin/python scripts/gpu_models.py OUT_DIR [--only NAME,...]

Each model goes to OUT_DIR/NAME/{model.onnx, inputs.npz, about.txt}: seeded random
weights from configs (nothing downloaded), BatchNorm statistics set, inputs of the
model's typical size (images in [0, 1], token ids inside the vocabulary). Models:
two torchvision CNNs, a timm CNN, a transformer encoder (BERT from a tiny config),
a Llama-like decode step with an explicit KV cache, and Ultralytics' YOLOv8n at
640x640 when `ultralytics` is installed (python/requirements-zoo.txt). Exit 0 with
a line per model (a model whose export failed says why and is left out).
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
import torch
from torch import nn

SEED = 0


def _set_norm_statistics(model, seed=SEED):
    """BatchNorm running statistics of a trained net (not 0/1), seeded."""
    g = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) * 0.5 + 0.5)
    return model


def _images(size, batch=1):
    """Pixels in [0, 1] on the 1/255 grid of the 8-bit images a detector or classifier is fed."""
    g = torch.Generator().manual_seed(SEED)
    return {"images": torch.randint(0, 256, (batch, 3, size, size), generator=g).float() / 255}


def torchvision_model(name, size):
    def build():
        import torchvision
        torch.manual_seed(SEED)
        return _set_norm_statistics(getattr(torchvision.models, name)(weights=None).eval()), _images(size)
    return build


def timm_model(name, size):
    def build():
        import timm
        torch.manual_seed(SEED)
        return _set_norm_statistics(timm.create_model(name, pretrained=False).eval()), _images(size)
    return build


def bert():
    from transformers import BertConfig, BertModel

    class Encoder(BertModel):
        def forward(self, input_ids, attention_mask):
            return super().forward(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    torch.manual_seed(SEED)
    config = BertConfig(vocab_size=1000, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=1024, max_position_embeddings=256)
    g = torch.Generator().manual_seed(SEED)
    ids = torch.randint(0, 1000, (2, 128), generator=g)
    mask = torch.ones(2, 128, dtype=torch.int64)
    mask[1, 96:] = 0
    return Encoder(config, add_pooling_layer=False).eval(), {"input_ids": ids, "attention_mask": mask}


class _RmsNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class _Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.norm1, self.norm2 = _RmsNorm(d), _RmsNorm(d)
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up, self.down = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False), \
            nn.Linear(2 * d, d, bias=False)

    def forward(self, x, past_k, past_v):
        b, s, d = x.shape
        h = self.norm1(x)
        q = self.q_proj(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = torch.cat([past_k, self.k_proj(h).view(b, s, self.heads, self.hd).transpose(1, 2)], dim=2)
        v = torch.cat([past_v, self.v_proj(h).view(b, s, self.heads, self.hd).transpose(1, 2)], dim=2)
        att = torch.softmax(q @ k.transpose(-1, -2) / self.hd ** 0.5, dim=-1)
        x = x + self.o_proj((att @ v).transpose(1, 2).reshape(b, s, d))
        h = self.norm2(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h)), k, v


class DecodeStep(nn.Module):
    """A Llama-like decoder's step: new tokens + the cache in, logits + the grown cache out."""

    def __init__(self, vocab=1000, d=256, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(_Block(d, heads) for _ in range(layers))
        self.norm = _RmsNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, *past):
        x = self.embed(input_ids)
        presents = []
        for i, block in enumerate(self.layers):
            x, k, v = block(x, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.lm_head(self.norm(x)), *presents)


def decode_step():
    torch.manual_seed(SEED)
    m = DecodeStep().eval()
    g = torch.Generator().manual_seed(SEED)
    inputs = {"input_ids": torch.randint(0, 1000, (1, 1), generator=g)}
    for i in range(len(m.layers)):
        for kv in ("key", "value"):
            inputs[f"past_{kv}_{i}"] = torch.randn(1, 4, 31, 64, generator=g)
    return m, inputs


def yolov8n():
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO  # test-only, AGPL: never imported by the package
    torch.manual_seed(SEED)
    yolo = YOLO("yolov8n.yaml")
    _set_norm_statistics(yolo.model)
    return yolo, _images(640)


MODELS = {
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small", 224), "torchvision CNN, 224x224"),
    "squeezenet1_0": (torchvision_model("squeezenet1_0", 224), "torchvision CNN, concatenated branches, 224x224"),
    "resnet10t": (timm_model("resnet10t", 224), "timm residual CNN, 224x224"),
    "bert": (bert, "transformers BERT encoder from a config: 2 layers, hidden 256, batch 2 x 128 tokens, padded"),
    "decode_step": (decode_step, "Llama-like decode step, explicit KV cache: 2 layers, d 256, past 31 + 1 token"),
    "yolov8n": (yolov8n, "Ultralytics YOLOv8n as Ultralytics exports it (opset 17), 640x640"),
}


def export(name, out_dir):
    build, about = MODELS[name]
    model, inputs = build()
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if name == "yolov8n":
        with tempfile.TemporaryDirectory() as tmp:
            model.export(format="onnx", dynamic=True, opset=17, imgsz=640, project=tmp, verbose=False)
            src = os.path.join(os.path.dirname(model.ckpt_path or ""), "yolov8n.onnx")
            if not os.path.exists(src):  # where ultralytics writes an export of a yaml-built model
                src = "yolov8n.onnx"
            os.replace(src, path)
        names = ["images"]
    else:
        names = list(inputs)
        outputs = ["logits"] + [f"present_{kv}_{i}" for i in range(len(model.layers)) for kv in ("key", "value")] \
            if name == "decode_step" else ["output"]
        with torch.no_grad():
            torch.onnx.export(model, tuple(inputs.values()), path, input_names=names, output_names=outputs,
                              opset_version=17, dynamo=False)
    np.savez(os.path.join(d, "inputs.npz"), **{k: v.numpy() for k, v in inputs.items()})
    with open(os.path.join(d, "about.txt"), "w", encoding="utf-8") as f:
        f.write(about + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--only", default=",".join(MODELS))
    a = p.parse_args(argv)
    for name in [n for n in a.only.split(",") if n]:
        if name not in MODELS:
            print(f"gpu_models: unknown model '{name}' (one of {', '.join(MODELS)})", file=sys.stderr)
            return 2
        start = time.time()
        try:
            export(name, a.out)
            print(f"{name}: ok ({time.time() - start:.1f} s)")
        except Exception as e:  # one model's failure is a line, not the end of the others
            print(f"{name}: FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
