"""Encoder-decoder step models for the generation check (issue 51 item 4),
from tiny transformers configs (T5Config, WhisperConfig) with seeded random
weights: nothing is downloaded.

Two families, two layouts each:
  separate  the encoder gives encoder_hidden_states and every decoder layer's
            cross-attention keys and values (present_{key,value}_cross_L); the
            step takes them as past_{key,value}_cross_L, unchanged at every step:
            step(input_ids, past_{key,value}_L, past_{key,value}_cross_L)
                 -> logits, present_{key,value}_L
  merged    the encoder gives encoder_hidden_states only; the decoder has a
            `use_cache_branch` input (optimum's merged decoder): False at the
            first step (the cross caches computed from encoder_hidden_states,
            the pasts empty), True after (the cross caches read from the pasts):
            step(input_ids, encoder_hidden_states, past_{key,value}_L,
                 past_{key,value}_cross_L, use_cache_branch) -> logits, present_{key,value}_L,
                 present_{key,value}_cross_L
            Its ONNX is two torchscript exports joined under one If
            (encdec_build.merge_branches), as optimum merges its decoders.
Factories: t5_step, t5_merged, whisper_step2, whisper_merged; faults are
planted in the exports (encdec_build), the dumps are the healthy model's.
"""

import torch

VOCAB, LAYERS, HEADS, HEAD_DIM, D_MODEL = 256, 2, 4, 16, 64
SELF = [f"past_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
CROSS = [f"past_{kv}_cross_{i}" for i in range(LAYERS) for kv in ("key", "value")]
STEP_INPUTS = ["input_ids"] + SELF + CROSS
MERGED_INPUTS = ["input_ids", "encoder_hidden_states"] + SELF + CROSS + ["use_cache_branch"]
STEP_OUTPUTS = ["logits"] + [p.replace("past", "present") for p in SELF]
MERGED_OUTPUTS = STEP_OUTPUTS + [p.replace("past", "present") for p in CROSS]
ENCODER_OUTPUTS = ["encoder_hidden_states"] + [p.replace("past", "present") for p in CROSS]
DYNAMIC = {"input_ids": {1: "seq"}, **{p: {2: "past"} for p in SELF}}
MERGED_DYNAMIC = {**DYNAMIC, **{p: {2: "enc_len"} for p in CROSS}}
# Where the planted faults go (module names of the step model).
ENCODER_FAULT = {"t5": "t5.encoder.block.1.layer.0.SelfAttention.v",
                 "whisper": "whisper_encoder.layers.1.self_attn.v_proj"}
DECODER_FAULT = {"t5": "t5.decoder.block.1.layer.0.SelfAttention.v",
                 "whisper": "decoder.layers.1.self_attn.v_proj"}


def t5_config():
    from transformers import T5Config
    config = T5Config(vocab_size=VOCAB, d_model=D_MODEL, d_kv=HEAD_DIM, d_ff=128, num_layers=LAYERS,
                      num_decoder_layers=LAYERS, num_heads=HEADS, relative_attention_num_buckets=8,
                      relative_attention_max_distance=20, dropout_rate=0.0, decoder_start_token_id=0,
                      pad_token_id=0, eos_token_id=1)
    # Tied (T5Config takes no tie_word_embeddings=False), the seeded decode repeats one token.
    config.tie_word_embeddings = False
    return config


def whisper_config():
    from transformers import WhisperConfig
    return WhisperConfig(num_mel_bins=80, d_model=D_MODEL, encoder_layers=2, encoder_attention_heads=HEADS,
                         encoder_ffn_dim=128, max_source_positions=50, decoder_layers=LAYERS,
                         decoder_attention_heads=HEADS, decoder_ffn_dim=128, vocab_size=VOCAB,
                         max_target_positions=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                         decoder_start_token_id=1)


def _cross_projections(decoder_layers, family):
    if family == "t5":
        return [(b.layer[1].EncDecAttention.k, b.layer[1].EncDecAttention.v) for b in decoder_layers]
    return [(layer.encoder_attn.k_proj, layer.encoder_attn.v_proj) for layer in decoder_layers]


class Encoder(torch.nn.Module):
    """The encoder's inputs -> encoder_hidden_states (and, given the decoder
    layers' cross-attention projections, each one's keys and values)."""

    def __init__(self, family, stack, projections=None):
        super().__init__()
        self.family, self.stack = family, stack
        self.projections = torch.nn.ModuleList(p for pair in projections for p in pair) if projections else None

    def forward(self, encoder_input):
        if self.family == "t5":
            hidden = self.stack(input_ids=encoder_input).last_hidden_state
        else:
            hidden = self.stack(input_features=encoder_input).last_hidden_state
        if self.projections is None:
            return (hidden,)
        b = hidden.shape[0]
        return (hidden, *[p(hidden).view(b, -1, HEADS, HEAD_DIM).transpose(1, 2).contiguous()
                          for p in self.projections])


class EncDecStep(torch.nn.Module):
    """A decoder step of `family` ("t5" or "whisper"); `merged`: with the
    use_cache_branch input (else the cross caches are the encoder's)."""

    encoder_input_names = ["encoder_input"]

    def __init__(self, family, merged):
        super().__init__()
        self.family, self.merged = family, merged
        if family == "t5":
            from transformers import T5ForConditionalGeneration
            self.config = t5_config()
            self.t5 = T5ForConditionalGeneration(self.config)
        else:
            from transformers.models.whisper.modeling_whisper import WhisperDecoder, WhisperEncoder
            self.config = whisper_config()
            self.whisper_encoder, self.decoder = WhisperEncoder(self.config), WhisperDecoder(self.config)
            self.proj_out = torch.nn.Linear(D_MODEL, VOCAB, bias=False)
        stack = self.t5.encoder if family == "t5" else self.whisper_encoder
        self.encoder = Encoder(family, stack, None if merged else _cross_projections(self.decoder_layers(), family))
        self.encoder_output_names = ENCODER_OUTPUTS if not merged else ENCODER_OUTPUTS[:1]
        self.branch = None  # set by encdec_build to export one branch of the merged decoder

    def decoder_layers(self):
        return self.t5.decoder.block if self.family == "t5" else self.decoder.layers

    def decode(self, input_ids, hidden, pasts, cross, use_cross_cache):
        from transformers.cache_utils import DynamicCache, EncoderDecoderCache
        own, xc = DynamicCache(config=self.config), DynamicCache(config=self.config)
        for i in range(LAYERS):
            own.update(pasts[2 * i], pasts[2 * i + 1], i)
            if use_cross_cache:
                xc.update(cross[2 * i], cross[2 * i + 1], i)
        cache = EncoderDecoderCache(own, xc)
        for i in range(LAYERS):
            cache.is_updated[i] = use_cross_cache
        if self.family == "t5":
            out = self.t5.decoder(input_ids=input_ids, encoder_hidden_states=hidden, past_key_values=cache,
                                  use_cache=True)
            logits = self.t5.lm_head(out.last_hidden_state)
        else:
            out = self.decoder(input_ids=input_ids, encoder_hidden_states=hidden, past_key_values=cache,
                               use_cache=True)
            logits = self.proj_out(out.last_hidden_state)
        kv = out.past_key_values
        own_out = [t for i in range(LAYERS) for t in (kv.self_attention_cache.layers[i].keys,
                                                      kv.self_attention_cache.layers[i].values)]
        if not self.merged:
            return (logits, *own_out)
        cross_out = [t for i in range(LAYERS) for t in (kv.cross_attention_cache.layers[i].keys,
                                                        kv.cross_attention_cache.layers[i].values)]
        return (logits, *own_out, *cross_out)

    def forward(self, input_ids, past_key_0, past_value_0, past_key_1, past_value_1, past_key_cross_0,
                past_value_cross_0, past_key_cross_1, past_value_cross_1):
        pasts = (past_key_0, past_value_0, past_key_1, past_value_1)
        cross = (past_key_cross_0, past_value_cross_0, past_key_cross_1, past_value_cross_1)
        # The cross-attention reads the given caches (is_updated); transformers
        # asks for encoder_hidden_states only to be given, and for its shape
        # [batch, encoder length, d_model], which the cross keys have.
        b, _, length, _ = past_key_cross_0.shape
        hidden = past_key_cross_0.transpose(1, 2).reshape(b, length, HEADS * HEAD_DIM)
        return self.decode(input_ids, hidden, pasts, cross, True)

    def make_encoder_inputs(self, seed=0):
        g = torch.Generator().manual_seed(seed)
        if self.family == "t5":
            return (torch.randint(2, VOCAB, (1, 7), generator=g),)
        return (torch.rand(1, 80, 100, generator=g) * 1.5 - 0.8,)

    def make_inputs(self, seed=0, seq=3, past=0):
        """The prompt: `seq` tokens after a past of `past` (empty by default)."""
        with torch.no_grad():
            hidden, *cross = self.encoder(*self.make_encoder_inputs(seed))
        g = torch.Generator().manual_seed(seed + 1)
        start = self.config.decoder_start_token_id
        ids = torch.cat([torch.full((1, 1), start, dtype=torch.int64),
                         torch.randint(3, VOCAB, (1, seq - 1), generator=g)], dim=1)
        own = [torch.randn(1, HEADS, past, HEAD_DIM, generator=g) * 0.5 for _ in SELF]
        if self.merged:
            enc_len = 0 if self.branch is not True else hidden.shape[1]
            cross = [torch.randn(1, HEADS, enc_len, HEAD_DIM, generator=g) * 0.5 for _ in CROSS]
            flag = torch.tensor([self.branch is True])
            return (ids, hidden, *own, *cross, flag)
        return (ids, *own, *cross)


class MergedStep(EncDecStep):
    """The merged decoder: use_cache_branch picks the branch (encdec_build
    exports each branch alone, `branch` set, and joins them under an If)."""

    def forward(self, input_ids, encoder_hidden_states, past_key_0, past_value_0, past_key_1, past_value_1,
                past_key_cross_0, past_value_cross_0, past_key_cross_1, past_value_cross_1, use_cache_branch):
        pasts = (past_key_0, past_value_0, past_key_1, past_value_1)
        cross = (past_key_cross_0, past_value_cross_0, past_key_cross_1, past_value_cross_1)
        branch = self.branch if self.branch is not None else bool(use_cache_branch.reshape(-1)[0])
        return self.decode(input_ids, encoder_hidden_states, pasts, cross, branch)


def _make(family, merged):
    torch.manual_seed(0)
    return (MergedStep if merged else EncDecStep)(family, merged).eval()


def t5_step():
    return _make("t5", False)


def t5_merged():
    return _make("t5", True)


def whisper_step2():
    return _make("whisper", False)


def whisper_merged():
    return _make("whisper", True)
