"""Decode-step models for the generation check (issue 42), from tiny
transformers configs with seeded random weights (nothing is downloaded).

llama_step()    a 2-layer Llama decode step with an explicit KV cache:
                input_ids, attention_mask, position_ids, past_key_L/past_value_L
                -> logits, present_key_L/present_value_L. make_inputs(seed):
                the prompt, 6 tokens after an empty past (batch 1).
whisper_step()  a Whisper-like decoder step (1 layer) whose encoder (2 layers)
                gives the cross-attention caches: encoder(input_features) ->
                encoder_hidden_states, present_key_cross_L/present_value_cross_L;
                step(input_ids, past_key_L, past_value_L, past_key_cross_L,
                past_value_cross_L) -> logits, present_key_L, present_value_L
                (the encoder's cross-attention keys and values are the step's
                past_*_cross inputs, fed unchanged at every step).
EXPORT_SIZES: the sizes the exports are traced at (dynamo fixes sizes 0 and 1).
"""

import torch

VOCAB, LAYERS, HEADS, KV_HEADS, HIDDEN = 256, 2, 4, 2, 64
PROMPT = 6
LLAMA_INPUTS = ["input_ids", "attention_mask", "position_ids"] + [
    f"past_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
LLAMA_OUTPUTS = ["logits"] + [f"present_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
LLAMA_DYNAMIC = {"input_ids": {1: "seq"}, "attention_mask": {1: "total"}, "position_ids": {1: "seq"},
                 **{f"past_{kv}_{i}": {2: "past"} for i in range(LAYERS) for kv in ("key", "value")}}
LLAMA_FAULT = "model.layers.1.self_attn.v_proj"


def step_class(base):
    """`base` (a transformers CausalLM class) with the step signature: ids, mask, positions and
    one past per cache in, logits and the presents out (LLAMA_OUTPUTS), for 2 layers."""
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

        def make_inputs(self, seed=0, seq=PROMPT, past=0):
            g = torch.Generator().manual_seed(seed)
            ids = torch.randint(3, VOCAB, (1, seq), generator=g)
            mask = torch.ones(1, past + seq, dtype=torch.int64)
            pos = (torch.arange(seq) + past).view(1, seq)
            head = HIDDEN // HEADS
            cache = [torch.randn(1, KV_HEADS, past, head, generator=g) * 0.5 for _ in range(2 * LAYERS)]
            return (ids, mask, pos, *cache)

    Step.__name__ = Step.__qualname__ = base.__name__.replace("ForCausalLM", "Step")
    return Step


def _llama_class():
    from transformers import LlamaForCausalLM
    return step_class(LlamaForCausalLM)


def llama_step(fault=None):
    """The Llama step; fault=1.02: LLAMA_FAULT's weight scaled by it."""
    from transformers import LlamaConfig
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=LAYERS,
                         num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=64,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0)
    model = _llama_class()(config).eval()
    if fault is not None:
        with torch.no_grad():
            dict(model.named_modules())[LLAMA_FAULT].weight.mul_(fault)
    return model


W_LAYERS = 1
WHISPER_STEP_INPUTS = ["input_ids"] + [
    f"past_{kv}_{i}" for i in range(W_LAYERS) for kv in ("key", "value")] + [
    f"past_{kv}_cross_{i}" for i in range(W_LAYERS) for kv in ("key", "value")]
WHISPER_STEP_OUTPUTS = ["logits"] + [f"present_{kv}_{i}" for i in range(W_LAYERS) for kv in ("key", "value")]
WHISPER_ENCODER_OUTPUTS = ["encoder_hidden_states"] + [
    f"present_{kv}_cross_{i}" for i in range(W_LAYERS) for kv in ("key", "value")]
WHISPER_DYNAMIC = {"input_ids": {1: "seq"}, **{f"past_{kv}_{i}": {2: "past"} for i in range(W_LAYERS)
                                              for kv in ("key", "value")}}


def _whisper_config():
    from transformers import WhisperConfig
    return WhisperConfig(num_mel_bins=80, d_model=64, encoder_layers=2, encoder_attention_heads=4,
                         encoder_ffn_dim=128, max_source_positions=50, decoder_layers=W_LAYERS,
                         decoder_attention_heads=4, decoder_ffn_dim=128, vocab_size=VOCAB, max_target_positions=64,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)


class WhisperEncoderWithCross(torch.nn.Module):
    """input_features -> encoder_hidden_states and each decoder layer's cross-attention keys and values."""

    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder_layers = encoder, decoder.layers
        self.heads = decoder.layers[0].encoder_attn.num_heads

    def forward(self, input_features):
        hidden = self.encoder(input_features=input_features).last_hidden_state
        out = [hidden]
        b = hidden.shape[0]
        for layer in self.decoder_layers:
            attn = layer.encoder_attn
            for proj in (attn.k_proj, attn.v_proj):
                out.append(proj(hidden).view(b, -1, self.heads, attn.head_dim).transpose(1, 2).contiguous())
        return tuple(out)


def _whisper_class():
    from transformers.cache_utils import DynamicCache, EncoderDecoderCache
    from transformers.models.whisper.modeling_whisper import WhisperDecoder, WhisperEncoder

    class WhisperStep(torch.nn.Module):
        encoder_input_names = ["input_features"]
        encoder_output_names = WHISPER_ENCODER_OUTPUTS

        def __init__(self, config):
            super().__init__()
            self.config = config
            decoder = WhisperDecoder(config)
            self.encoder = WhisperEncoderWithCross(WhisperEncoder(config), decoder)
            self.decoder = decoder
            self.proj_out = torch.nn.Linear(config.d_model, config.vocab_size, bias=False)

        def forward(self, input_ids, past_key_0, past_value_0, past_key_cross_0, past_value_cross_0):
            own, cross = DynamicCache(config=self.config), DynamicCache(config=self.config)
            own.update(past_key_0, past_value_0, 0)
            cross.update(past_key_cross_0, past_value_cross_0, 0)
            cache = EncoderDecoderCache(own, cross)
            cache.is_updated[0] = True  # the cross-attention keys are given: not recomputed
            # The cross-attention reads its keys and values from the cache
            # (is_updated); transformers only asks that encoder_hidden_states
            # be given (not None) for it to run at all.
            out = self.decoder(input_ids=input_ids, encoder_hidden_states=past_key_cross_0,
                               past_key_values=cache, use_cache=True)
            kv = out.past_key_values.self_attention_cache
            return self.proj_out(out.last_hidden_state), kv.layers[0].keys, kv.layers[0].values

        def make_encoder_inputs(self, seed=0):
            g = torch.Generator().manual_seed(seed)
            return (torch.rand(1, 80, 100, generator=g) * 1.5 - 0.8,)

        def make_inputs(self, seed=0, seq=3, past=0):
            with torch.no_grad():
                _, *cross = self.encoder(*self.make_encoder_inputs(seed))
            g = torch.Generator().manual_seed(seed + 1)
            ids = torch.cat([torch.ones(1, 1, dtype=torch.int64), torch.randint(3, VOCAB, (1, seq - 1), generator=g)],
                            dim=1)
            own = [torch.randn(1, 4, past, 16, generator=g) * 0.5 for _ in range(2 * W_LAYERS)]
            return (ids, *own, *cross)

    return WhisperStep


def whisper_step():
    torch.manual_seed(0)
    return _whisper_class()(_whisper_config()).eval()
