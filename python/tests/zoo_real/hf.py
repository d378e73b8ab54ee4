"""transformers, timm and torchvision models of the real exporters' zoo, from
tiny configs with seeded random weights (nothing is downloaded): a ViT image
classifier, a Llama decode step with an explicit KV cache, a Whisper encoder,
a timm ConvNeXt, torchvision's mobilenet_v3_small (for its int8 copy)."""

import torch

from .common import calibrate_batchnorm, images

VOCAB = 256
LAYERS, HEADS, KV_HEADS, HIDDEN = 2, 4, 2, 64
PAST = 12


def vit():
    from transformers import ViTConfig, ViTForImageClassification
    torch.manual_seed(0)
    config = ViTConfig(image_size=64, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=128, num_labels=100)
    model = ViTForImageClassification(config).eval()

    class ViTForExport(torch.nn.Module):
        """pixel_values -> logits (a tensor, not a ModelOutput)."""

        def __init__(self, m):
            super().__init__()
            self.vit, self.classifier = m.vit, m.classifier

        def forward(self, pixel_values):
            hidden = self.vit(pixel_values=pixel_values).last_hidden_state
            return self.classifier(hidden[:, 0, :])

    return ViTForExport(model).eval(), (images(1, 64, seed=0),)


def llama_decode():
    """One decode step of a 2-layer Llama with a past of PAST tokens: inputs
    input_ids [1, 1], attention_mask [1, PAST+1], position_ids [1, 1], then
    past_key_L / past_value_L [1, kv_heads, PAST, head_dim] per layer;
    outputs logits and present_key_L / present_value_L."""
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.cache_utils import DynamicCache

    class LlamaDecodeStep(LlamaForCausalLM):
        def forward(self, input_ids, attention_mask, position_ids, past_key_0, past_value_0, past_key_1,
                    past_value_1):
            cache = DynamicCache(config=self.config)
            cache.update(past_key_0, past_value_0, 0)
            cache.update(past_key_1, past_value_1, 1)
            out = super().forward(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                                  past_key_values=cache, use_cache=True)
            kv = out.past_key_values
            return (out.logits, kv.layers[0].keys, kv.layers[0].values, kv.layers[1].keys, kv.layers[1].values)

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=LAYERS,
                         num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, max_position_embeddings=64,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0)
    model = LlamaDecodeStep(config).eval()
    return model, decode_inputs(model, config)


def decode_inputs(model, config, seed=0):
    """A real past: the prompt's KV cache from the model itself, then the next token."""
    from transformers.cache_utils import DynamicCache
    g = torch.Generator().manual_seed(seed)
    prompt = torch.randint(3, VOCAB, (1, PAST), generator=g)
    with torch.no_grad():
        cache = DynamicCache(config=config)
        # the plain causal LM's forward (the decode step's takes a past)
        out = type(model).__mro__[1].forward(model, input_ids=prompt, past_key_values=cache, use_cache=True)
    kv = out.past_key_values
    nxt = torch.randint(3, VOCAB, (1, 1), generator=g)
    mask = torch.ones(1, PAST + 1, dtype=torch.int64)
    pos = torch.tensor([[PAST]], dtype=torch.int64)
    return (nxt, mask, pos, kv.layers[0].keys.clone(), kv.layers[0].values.clone(),
            kv.layers[1].keys.clone(), kv.layers[1].values.clone())


def padded_decode_inputs(model, config, pad=4, seed=1):
    """A left-padded batch of two as a server batches prompts of unequal
    length (issue 50, "a healthy padded-batch decoder"): row 0's first `pad`
    positions are padding (mask 0 in its past, positions counted from its
    first real token), row 1 is full; the past is the model's own prefill of
    that batch."""
    from transformers.cache_utils import DynamicCache
    g = torch.Generator().manual_seed(seed)
    prompt = torch.randint(3, VOCAB, (2, PAST), generator=g)
    prompt[0, :pad] = config.pad_token_id
    mask = torch.ones(2, PAST, dtype=torch.int64)
    mask[0, :pad] = 0
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        cache = DynamicCache(config=config)
        out = type(model).__mro__[1].forward(model, input_ids=prompt, attention_mask=mask, position_ids=positions,
                                             past_key_values=cache, use_cache=True)
    kv = out.past_key_values
    nxt = torch.randint(3, VOCAB, (2, 1), generator=g)
    step_mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.int64)], dim=1)
    pos = positions[:, -1:] + 1
    return (nxt, step_mask, pos, kv.layers[0].keys.clone(), kv.layers[0].values.clone(),
            kv.layers[1].keys.clone(), kv.layers[1].values.clone())


LLAMA_INPUTS = ["input_ids", "attention_mask", "position_ids", "past_key_0", "past_value_0", "past_key_1",
                "past_value_1"]
LLAMA_OUTPUTS = ["logits", "present_key_0", "present_value_0", "present_key_1", "present_value_1"]


def whisper_encoder():
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    class WhisperEncoderForExport(WhisperEncoder):
        def forward(self, input_features):
            return super().forward(input_features=input_features).last_hidden_state

    torch.manual_seed(0)
    config = WhisperConfig(num_mel_bins=80, d_model=64, encoder_layers=2, encoder_attention_heads=4,
                           encoder_ffn_dim=128, max_source_positions=50, decoder_layers=1,
                           decoder_attention_heads=4, decoder_ffn_dim=128, vocab_size=VOCAB,
                           pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    model = WhisperEncoderForExport(config).eval()
    g = torch.Generator().manual_seed(0)
    # log-mel features as WhisperFeatureExtractor gives them: about [-1, 1]
    features = (torch.rand(1, 80, 100, generator=g) * 1.5 - 0.8)
    return model, (features,)


def convnext():
    import timm
    torch.manual_seed(0)
    model = timm.create_model("convnext_atto", pretrained=False, num_classes=100).eval()
    return model, (images(1, 64, seed=0),)


def mobilenet():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v3_small(weights=None)
    calibrate_batchnorm(model, [images(4, 96, seed=10 + k) for k in range(3)])
    return model, (images(1, 96, seed=0),)
