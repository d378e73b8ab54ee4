"""Decode-step models of more families for the ORT GenAI package check
(test_genai.py, genai_build.py), from tiny transformers configs with seeded
random weights (nothing is downloaded). Each is the family's CausalLM with
the step signature of gen_models.llama_step (input_ids, attention_mask,
position_ids, past_key_L/past_value_L -> logits, present_key_L/
present_value_L; outputs gen_models.LLAMA_OUTPUTS), so that
`python -m parity.torch corpus` records it as it records the Llama step.

qwen2_step()   Qwen2 (q/k/v projections with a bias), 2 layers, hidden 64.
"""

import torch

import gen_models as gm


def _step_class(base):
    from transformers.cache_utils import DynamicCache

    class Step(base):
        def forward(self, input_ids, attention_mask, position_ids, past_key_0, past_value_0, past_key_1,
                    past_value_1):
            cache = DynamicCache(config=self.config)
            cache.update(past_key_0, past_value_0, 0)
            cache.update(past_key_1, past_value_1, 1)
            out = super().forward(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                                  past_key_values=cache, use_cache=True)
            kv = out.past_key_values
            return (out.logits, kv.layers[0].keys, kv.layers[0].values, kv.layers[1].keys, kv.layers[1].values)

        def make_inputs(self, seed=0, seq=gm.PROMPT, past=0):
            g = torch.Generator().manual_seed(seed)
            ids = torch.randint(3, gm.VOCAB, (1, seq), generator=g)
            mask = torch.ones(1, past + seq, dtype=torch.int64)
            pos = (torch.arange(seq) + past).view(1, seq)
            head = gm.HIDDEN // gm.HEADS
            cache = [torch.randn(1, gm.KV_HEADS, past, head, generator=g) * 0.5 for _ in range(2 * gm.LAYERS)]
            return (ids, mask, pos, *cache)

    Step.__name__ = base.__name__.replace("ForCausalLM", "Step")
    return Step


def qwen2_step():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=gm.VOCAB, hidden_size=gm.HIDDEN, intermediate_size=128,
                         num_hidden_layers=gm.LAYERS, num_attention_heads=gm.HEADS, num_key_value_heads=gm.KV_HEADS,
                         max_position_embeddings=64, bos_token_id=1, eos_token_id=2, pad_token_id=0,
                         tie_word_embeddings=False, use_sliding_window=False)
    model = _step_class(Qwen2ForCausalLM)(config).eval()
    with torch.no_grad():  # the biases are zeros at init: seeded values, so that they count
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                proj.bias.normal_(0, 0.1)
    return model
