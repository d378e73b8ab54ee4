"""The models of the test zoo (cache.py): small, random weights, built from
code or configs (nothing is downloaded), each with fixed example inputs.

Every model is built under torch.manual_seed(0), and its BatchNorm layers get
non-trivial statistics (a fresh BatchNorm is the identity in eval mode, which
would hide the difference between a Conv and the BatchNorm folded into it).
"""

import dataclasses
from typing import Callable

import torch

from . import models


@dataclasses.dataclass(frozen=True)
class ZooModel:
    name: str
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[], tuple]          # example inputs, deterministic
    input_names: tuple
    output_names: tuple
    dynamic_axes: dict = None            # {"images": {0: "batch"}}, for both exporters
    about: str = ""
    other_inputs: Callable[[], tuple] = None  # inputs of other sizes along the dynamic axes


def _images(size=64, batch=1, seed=0):
    return lambda: (torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(seed)),)


def _tokens(vocab, seq=16, batch=1, seed=0):
    def make():
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, vocab, (batch, seq), generator=g)
        attention = torch.ones(batch, seq, dtype=torch.int64)
        attention[-1, -4:] = 0  # a padded tail: the mask path is exercised
        return ids, attention
    return make


_TOKEN_AXES = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}


def _torchvision(name):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(weights=None)
    return build


def _timm(name):
    def build():
        import timm
        return timm.create_model(name, pretrained=False)
    return build


_VOCAB = 512


# transformers' forwards take many optional arguments and decorators that pass
# some (use_cache) by keyword; the TorchScript exporter calls forward with every
# argument positionally (defaults filled in), so forward gets use_cache twice
# and GPT-2's logits_to_keep=0 becomes a graph input. These subclasses take
# only the tensors the zoo feeds and pass them by keyword; module paths are
# the original model's. GPT-2 gets an attention mask: without one, transformers
# looks for packed sequences with torch.diff, which TorchScript cannot export.


def _bert():
    from transformers import BertConfig, BertModel

    class BertModelForExport(BertModel):
        def forward(self, input_ids, attention_mask):
            return super().forward(input_ids=input_ids, attention_mask=attention_mask)

    config = BertConfig(vocab_size=_VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=64)
    return BertModelForExport(config, add_pooling_layer=True)


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    class GPT2LMHeadModelForExport(GPT2LMHeadModel):
        def forward(self, input_ids, attention_mask):
            return super().forward(input_ids=input_ids, attention_mask=attention_mask)

    config = GPT2Config(vocab_size=_VOCAB, n_positions=64, n_embd=64, n_layer=2, n_head=4, use_cache=False,
                        bos_token_id=_VOCAB - 1, eos_token_id=_VOCAB - 1)
    return GPT2LMHeadModelForExport(config)


def _own(cls):
    return lambda: cls()


ZOO = {m.name: m for m in (
    ZooModel("resnet18", _torchvision("resnet18"), _images(64), ("images",), ("logits",),
             {"images": {0: "batch"}}, "torchvision; residual `out += identity`, ReLU(inplace=True)",
             _images(64, batch=2, seed=1)),
    ZooModel("mobilenet_v3_small", _torchvision("mobilenet_v3_small"), _images(64), ("images",), ("logits",),
             None, "torchvision; hardswish, squeeze-excitation"),
    ZooModel("squeezenet1_0", _torchvision("squeezenet1_0"), _images(64), ("images",), ("logits",),
             None, "torchvision; concat of parallel branches, ceil-mode pooling"),
    ZooModel("bert", _bert, _tokens(_VOCAB), ("input_ids", "attention_mask"),
             ("last_hidden_state", "pooler_output"), _TOKEN_AXES,
             "transformers BertModel from a config: 2 layers, hidden 64, 4 heads; padded mask; "
             "dynamic batch/sequence", _tokens(_VOCAB, seq=24, batch=2, seed=1)),
    ZooModel("gpt2", _gpt2, _tokens(_VOCAB), ("input_ids", "attention_mask"), ("logits",), _TOKEN_AXES,
             "transformers GPT2LMHeadModel from a config: 2 layers, n_embd 64, 4 heads, no cache; "
             "dynamic batch/sequence", _tokens(_VOCAB, seq=24, batch=2, seed=1)),
    ZooModel("resnet10t", _timm("resnet10t"), _images(64), ("images",), ("logits",), None,
             "timm, pretrained=False"),
    ZooModel("mobilevit_xxs", _timm("mobilevit_xxs"), _images(64), ("images",), ("logits",), None,
             "timm MobileViT: convolutions and transformer blocks (unfold/fold of patches)"),
    ZooModel("yolo_like", _own(models.YoloLike), lambda: models.YoloLike.make_inputs(0),
             ("images",), ("p3", "p4", "p5"),
             # The heads named per stride: left to TorchScript's own naming, p4 and p5 were declared
             # with p3's symbols though they are 1/2 and 1/4 its size (check's declared_shapes finding).
             {"images": {0: "batch", 2: "height", 3: "width"}, "p3": {0: "batch", 2: "h8", 3: "w8"},
              "p4": {0: "batch", 2: "h16", 3: "w16"}, "p5": {0: "batch", 2: "h32", 3: "w32"}},
             "zoo.models.YoloLike: 3 heads, dynamic batch/height/width (multiples of 32)",
             lambda: models.YoloLike.make_inputs(1, batch=2, height=96, width=128)),
    ZooModel("tuple_twice", _own(models.TupleTwice), lambda: models.TupleTwice.make_inputs(0),
             ("x",), ("y", "h"), None,
             "zoo.models.TupleTwice: tuple outputs, modules called twice"),
    ZooModel("tiny_transformer", _own(models.TinyTransformer), lambda: models.TinyTransformer.make_inputs(0),
             ("tokens",), ("hidden",), None,
             "zoo.models.TinyTransformer: nn.TransformerEncoder (fast path off)"),
)}


def build_model(spec):
    """(model, example inputs) for a ZooModel, deterministically."""
    torch.manual_seed(0)
    model = spec.build()
    _randomize_norm_statistics(model)
    return model, tuple(spec.inputs())


def _randomize_norm_statistics(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None:
                n = m.running_mean.numel()
                m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
                m.running_var.copy_(0.5 + torch.rand(n, generator=g))
                if m.affine:
                    m.weight.copy_(0.8 + 0.4 * torch.rand(n, generator=g))
                    m.bias.copy_(0.1 * torch.randn(n, generator=g))
