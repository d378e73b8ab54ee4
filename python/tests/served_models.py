"""Decode steps as they are served (issue 51): padded batches, positions after
the past, and the faults that only padding or positions show. Seeded weights,
nothing downloaded.

PaddedStep(fault=None)   zoo.decode.DecodeStep with its own mask code; its
                         make_inputs(seed) is a left-padded prompt of 3 rows
                         (0, 2 and 1 pad tokens), positions restarting per row
                         (the mask's cumulative sum - 1, 1 at the pads).
                         fault="past_mask": the step ignores the mask over the
                         past (it masks only its new tokens); fault="positions":
                         the new tokens' positions restart at 0 after the past.
gpt2_step(fault=None)    a 2-layer transformers GPT-2 step with an explicit
                         cache and learned positions (position_ids read by the
                         wpe embedding); fault="positions" as above.
"""

import torch

from zoo.decode import DecodeStep, HEADS, HIDDEN, LAYERS, VOCAB

PADDED_INPUTS = ["input_ids", "attention_mask", "position_ids"] + [
    f"past_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
PADDED_OUTPUTS = ["logits"] + [f"present_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
STEP_DYNAMIC = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
                "position_ids": {0: "batch", 1: "seq"},
                **{f"past_{kv}_{i}": {0: "batch", 2: "past"} for i in range(LAYERS) for kv in ("key", "value")}}
PROMPT, PADS = 5, (0, 2, 1)


def served_positions(mask, seq):
    """transformers' generate: the mask's cumulative sum - 1, 1 where padded; the last `seq`."""
    pos = mask.long().cumsum(-1) - 1
    return pos.masked_fill(mask == 0, 1)[:, -seq:]


class PaddedStep(DecodeStep):
    def __init__(self, fault=None):
        torch.manual_seed(0)
        super().__init__()
        self.fault = fault

    def forward(self, input_ids, attention_mask, position_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        seq, total = input_ids.shape[1], attention_mask.shape[1]
        past = total - seq
        keys = torch.arange(total).view(1, total)
        queries = torch.arange(seq).view(seq, 1) + past
        mask = attention_mask.bool()
        if self.fault == "past_mask":  # the past's padding is not masked
            mask = torch.cat([torch.ones_like(mask[:, :past]), mask[:, past:]], dim=1)
        if self.fault == "positions":  # the positions restart after the past
            position_ids = position_ids - past
        allowed = (keys <= queries).unsqueeze(0) & mask.unsqueeze(1)
        bias = torch.where(allowed, 0.0, -1e4).unsqueeze(1)
        x = self.embed_tokens(input_ids)
        presents = []
        for layer, (k, v) in zip(self.layers, ((past_key_0, past_value_0), (past_key_1, past_value_1))):
            x, k, v = layer(x, bias, position_ids, k, v)
            presents += [k, v]
        return (self.lm_head(self.norm(x)), *presents)

    def make_inputs(self, seed=0, past=0):
        g = torch.Generator().manual_seed(seed)
        batch = len(PADS)
        ids = torch.randint(3, VOCAB, (batch, PROMPT), generator=g)
        mask = torch.ones(batch, past + PROMPT, dtype=torch.int64)
        for row, pad in enumerate(PADS):
            mask[row, :pad] = 0
            ids[row, :pad] = 0
        cache = [torch.randn(batch, HEADS, past, HIDDEN // HEADS, generator=g) for _ in range(2 * LAYERS)]
        return (ids, mask, served_positions(mask, PROMPT), *cache)


def padded_step():
    return PaddedStep()


def padded_step_past_mask():
    return PaddedStep("past_mask")


GPT2_LAYERS = 2


def gpt2_step(fault=None):
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.cache_utils import DynamicCache

    class GPT2Step(GPT2LMHeadModel):
        def forward(self, input_ids, attention_mask, position_ids, past_key_0, past_value_0, past_key_1,
                    past_value_1):
            if fault == "positions":
                position_ids = position_ids - (attention_mask.shape[1] - input_ids.shape[1])
            cache = DynamicCache()
            cache.update(past_key_0, past_value_0, 0)
            cache.update(past_key_1, past_value_1, 1)
            out = super().forward(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                                  past_key_values=cache, use_cache=True)
            kv = out.past_key_values
            return (out.logits, kv.layers[0].keys, kv.layers[0].values, kv.layers[1].keys, kv.layers[1].values)

        def make_inputs(self, seed=0, seq=3, past=4, batch=2):
            g = torch.Generator().manual_seed(seed)
            ids = torch.randint(3, 128, (batch, seq), generator=g)
            mask = torch.ones(batch, past + seq, dtype=torch.int64)
            cache = [torch.randn(batch, 2, past, 16, generator=g) for _ in range(2 * GPT2_LAYERS)]
            return (ids, mask, served_positions(mask, seq), *cache)

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=128, n_positions=256, n_embd=32, n_layer=GPT2_LAYERS, n_head=2, bos_token_id=1, eos_token_id=2,
                        attn_implementation="eager")
    return GPT2Step(config).eval()
