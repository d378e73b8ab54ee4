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


def qwen2_step():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=gm.VOCAB, hidden_size=gm.HIDDEN, intermediate_size=128,
                         num_hidden_layers=gm.LAYERS, num_attention_heads=gm.HEADS, num_key_value_heads=gm.KV_HEADS,
                         max_position_embeddings=64, bos_token_id=1, eos_token_id=2, pad_token_id=0,
                         tie_word_embeddings=False, use_sliding_window=False)
    model = gm.step_class(Qwen2ForCausalLM)(config).eval()
    with torch.no_grad():  # the biases are zeros at init: seeded values, so that they count
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                proj.bias.normal_(0, 0.1)
    return model
