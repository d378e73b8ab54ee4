"""Sequence models whose inputs must fit together (issue 41).

DecodeStep  one decode step of a tiny Llama-like decoder with an explicit KV
            cache: input_ids [batch, seq], attention_mask [batch, past + seq],
            position_ids [batch, seq], past_key_L / past_value_L
            [batch, heads, past, head_dim] per layer; outputs logits and
            present_key_L / present_value_L. A mask of any other length is
            refused by PyTorch (it cannot broadcast against the scores).
CondBranches torch.cond whose branches call submodules (torch traces the
            branches even in eager mode); bound=True: cond bound at import
            (the dumper cannot run its branches eagerly); side_effect=True:
            a branch appends to a list, which torch's capture refuses.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, HIDDEN, HEADS, LAYERS, PAST = 97, 32, 2, 2, 6
DECODE_INPUTS = ["input_ids", "attention_mask", "position_ids"] + [
    f"past_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
DECODE_OUTPUTS = ["logits"] + [f"present_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
# --dynamic for parity.torch's command line: batch, seq, past and the mask's total length
DECODE_DYNAMIC = ["input_ids:0:batch", "input_ids:1:seq", "attention_mask:0:batch", "attention_mask:1:total",
                  "position_ids:0:batch", "position_ids:1:seq"] + [
    f"past_{kv}_{i}:{axis}:{label}" for i in range(LAYERS) for kv in ("key", "value")
    for axis, label in ((0, "batch"), (2, "past"))]


def _rotate(x, positions):
    """Rotary position embedding (rotate-half form) at integer positions."""
    half = x.shape[-1] // 2
    freq = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
    angle = positions.unsqueeze(1).unsqueeze(-1).float() * freq  # [batch, 1, seq, half]
    cos, sin = torch.cos(angle).repeat(1, 1, 1, 2), torch.sin(angle).repeat(1, 1, 1, 2)
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj, self.k_proj = nn.Linear(HIDDEN, HIDDEN, bias=False), nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v_proj, self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False), nn.Linear(HIDDEN, HIDDEN, bias=False)

    def forward(self, x, bias, positions, past_key, past_value):
        b, s, _ = x.shape

        def heads(t):
            return t.view(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)
        q, k = _rotate(heads(self.q_proj(x)), positions), _rotate(heads(self.k_proj(x)), positions)
        k, v = torch.cat([past_key, k], dim=2), torch.cat([past_value, heads(self.v_proj(x))], dim=2)
        scores = q @ k.transpose(-1, -2) / (HIDDEN // HEADS) ** 0.5 + bias
        out = F.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, s, HIDDEN)), k, v


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.self_attn = Attention()
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, 2 * HIDDEN), nn.SiLU(), nn.Linear(2 * HIDDEN, HIDDEN))

    def forward(self, x, bias, positions, past_key, past_value):
        a, k, v = self.self_attn(self.norm1(x), bias, positions, past_key, past_value)
        x = x + a
        return x + self.mlp(self.norm2(x)), k, v


class DecodeStep(nn.Module):
    """Traced by default at batch 2 and 2 new tokens: torch.export fixes
    dynamic axes traced at size 1 (0/1 specialization)."""

    def __init__(self, batch=2, seq=2, past=PAST):
        super().__init__()
        self.sizes = {"batch": batch, "seq": seq, "past": past}
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, attention_mask, position_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        seq, total = input_ids.shape[1], attention_mask.shape[1]
        past = total - seq
        # causal within the new tokens, every past token visible; padding masked
        keys = torch.arange(total).view(1, total)
        queries = torch.arange(seq).view(seq, 1) + past
        allowed = (keys <= queries).unsqueeze(0) & attention_mask.bool().unsqueeze(1)  # [batch, seq, total]
        bias = torch.where(allowed, 0.0, -1e4).unsqueeze(1)  # [batch, 1, seq, total]
        x = self.embed_tokens(input_ids)
        presents = []
        for layer, (k, v) in zip(self.layers, ((past_key_0, past_value_0), (past_key_1, past_value_1))):
            x, k, v = layer(x, bias, position_ids, k, v)
            presents += [k, v]
        return (self.lm_head(self.norm(x)), *presents)

    def make_inputs(self, seed=0):
        batch, seq, past = self.sizes["batch"], self.sizes["seq"], self.sizes["past"]
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(3, VOCAB, (batch, seq), generator=g)
        mask = torch.ones(batch, past + seq, dtype=torch.int64)
        positions = (torch.arange(seq) + past).expand(batch, seq).contiguous()
        cache = [torch.randn(batch, HEADS, past, HIDDEN // HEADS, generator=g) for _ in range(2 * LAYERS)]
        return (ids, mask, positions, *cache)


def faulty_v_proj():
    """DecodeStep with a 1.02 weight planted in layer 0's attention v_proj
    (the same seeded weights otherwise): its export against a healthy dump
    must fail at that module."""
    model = DecodeStep()
    with torch.no_grad():
        model.layers[0].self_attn.v_proj.weight.mul_(1.02)
    return model


_BOUND_COND = torch.cond
SEEN = []


class CondBranches(nn.Module):
    """y = torch.cond(x.sum() > 0, big, small, (x,)), each branch a submodule call."""

    def __init__(self, bound=False, side_effect=False):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.big, self.small = nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.bound, self.side_effect = bound, side_effect

    def forward(self, x):
        h = self.fc(x)
        cond = _BOUND_COND if self.bound else torch.cond
        return cond(h.sum() > 0, self._big, lambda t: self.small(t) - 1, (h,))

    def _big(self, t):
        if self.side_effect:
            SEEN.append(t)
        return self.big(t) * 2

    @staticmethod
    def make_inputs(seed=0):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(2, 4, generator=g),)
