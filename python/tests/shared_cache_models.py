"""A decode step in the shared-buffer cache form (ORT GenAI's
`past_present_share_buffer`; issue 52 item 3, docs/generation.md "Deployed
cache forms"), with seeded weights: nothing is downloaded.

shared_step()   the PyTorch step (small_shared_step(): buffers of 8 positions): input_ids [1, S], position_ids [1, S] and
                past_key_L/past_value_L [1, HEADS, MAX, HEAD] -> logits
                [1, S, VOCAB] and present_key_L/present_value_L of the
                past's shape: each layer writes its keys and values at the
                positions fed (scatter along the length axis) and attends to
                the positions up to its own.
build_onnx()    the same step as an ONNX graph built node by node (opset 17,
                the cache write a ScatterElements at position_ids), with the
                PyTorch step's weights, and the planted faults:
                  "offby1"      layer 1's keys written at position + 1
                  "readbeyond"  layer 0 attends to position + 1, not yet written
                  "short"       present_key_0 made MAX - 1 long (its length declared open)
gqa_step()      the same step fed an attention_mask instead of positions (as
                ORT GenAI feeds its graphs); build_gqa_onnx() its graph with
                com.microsoft GroupQueryAttention writing the shared buffers
                in place, and the planted fault "seqlens" (seqlens_k =
                sum(mask) instead of sum(mask) - 1).
"""

import math

import numpy as np
import torch

VOCAB, HIDDEN, HEADS, HEAD, LAYERS, MAX, PROMPT = 64, 32, 2, 16, 2, 16, 5
INPUTS = ["input_ids", "position_ids"] + [f"past_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
OUTPUTS = ["logits"] + [f"present_{kv}_{i}" for i in range(LAYERS) for kv in ("key", "value")]
FAULTS = ("offby1", "readbeyond", "short")


class SharedStep(torch.nn.Module):
    def __init__(self, seed=0, max_len=MAX):
        super().__init__()
        self.max_len = max_len
        g = torch.Generator().manual_seed(seed)

        def w(*shape, scale=1.0):
            return torch.nn.Parameter(torch.randn(*shape, generator=g) * scale)

        self.embed = w(VOCAB, HIDDEN)
        s = 1 / math.sqrt(HIDDEN)
        self.wq = torch.nn.ParameterList([w(HIDDEN, HEADS * HEAD, scale=s) for _ in range(LAYERS)])
        self.wk = torch.nn.ParameterList([w(HIDDEN, HEADS * HEAD, scale=s) for _ in range(LAYERS)])
        self.wv = torch.nn.ParameterList([w(HIDDEN, HEADS * HEAD, scale=s) for _ in range(LAYERS)])
        self.wo = torch.nn.ParameterList([w(HEADS * HEAD, HIDDEN, scale=s) for _ in range(LAYERS)])
        self.lm = w(HIDDEN, VOCAB, scale=s)

    def forward(self, input_ids, position_ids, past_key_0, past_value_0, past_key_1, past_value_1):
        pasts = [(past_key_0, past_value_0), (past_key_1, past_value_1)]
        x = self.embed[input_ids]
        seq = input_ids.shape[1]
        pos4 = position_ids[:, None, :, None]
        visible = torch.arange(self.max_len)[None, None, None, :] <= pos4
        presents = []
        for layer, (pk, pv) in enumerate(pasts):
            def heads(t):
                return t.view(1, seq, HEADS, HEAD).transpose(1, 2)
            q, k, v = heads(x @ self.wq[layer]), heads(x @ self.wk[layer]), heads(x @ self.wv[layer])
            # past the buffer's end the last position is written again (the
            # "fix" that trades a crash for wrong output; small_shared_step)
            idx = pos4.clamp(max=self.max_len - 1).expand(-1, HEADS, -1, HEAD)
            key, value = pk.scatter(2, idx, k), pv.scatter(2, idx, v)
            scores = (q @ key.transpose(-1, -2)) / math.sqrt(HEAD)
            scores = scores.masked_fill(~visible, torch.finfo(scores.dtype).min)
            ctx = torch.softmax(scores, dim=-1) @ value
            x = x + ctx.transpose(1, 2).reshape(1, seq, HEADS * HEAD) @ self.wo[layer]
            presents += [key, value]
        return (x @ self.lm, *presents)

    def make_inputs(self, seed=0, seq=PROMPT):
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, VOCAB, (1, seq), generator=g)
        pos = torch.arange(seq).view(1, seq)
        return (ids, pos, *[torch.zeros(1, HEADS, self.max_len, HEAD) for _ in range(2 * LAYERS)])


def shared_step():
    return SharedStep(0).eval()


def small_shared_step():
    """The step with buffers of 8 positions: a prompt of 5 and 8 steps need 12."""
    return SharedStep(0, max_len=8).eval()


def _np(t):
    return t.detach().numpy().astype(np.float32)


def build_onnx(model, path, fault=None):
    """Writes the step as ONNX (opset 17) with `model`'s weights; `fault`: one of FAULTS or None."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    assert fault in (None, *FAULTS), fault
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    const("embed", _np(model.embed))
    const("lm", _np(model.lm))
    const("one", np.array(1, dtype=np.int64))
    const("axes13", np.array([1, 3], dtype=np.int64))
    max_len = model.max_len
    const("slots", np.arange(max_len, dtype=np.int64).reshape(1, 1, 1, max_len))
    const("heads_shape", np.array([1, -1, HEADS, HEAD], dtype=np.int64))
    const("flat_shape", np.array([1, -1, HEADS * HEAD], dtype=np.int64))
    const("scale", np.array(1 / math.sqrt(HEAD), dtype=np.float32))
    const("lowest", np.array(np.finfo(np.float32).min, dtype=np.float32))
    x = node("Gather", ["embed", "input_ids"], "x0")
    pos4 = node("Unsqueeze", ["position_ids", "axes13"], "pos4")
    pos4_next = node("Add", [pos4, "one"], "pos4_next")
    visible = node("LessOrEqual", ["slots", pos4], "visible")
    visible_beyond = node("LessOrEqual", ["slots", pos4_next], "visible_beyond")
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "seq", VOCAB])]
    cache = [1, HEADS, max_len, HEAD]
    for layer in range(LAYERS):
        proj = {}
        for name in ("q", "k", "v"):
            w = const(f"w{name}{layer}", _np(getattr(model, f"w{name}")[layer]))
            mm = node("MatMul", [x, w], f"{name}{layer}_mm")
            rs = node("Reshape", [mm, "heads_shape"], f"{name}{layer}_rs")
            proj[name] = node("Transpose", [rs], f"{name}{layer}", perm=[0, 2, 1, 3])
        shape = node("Shape", [proj["k"]], f"kshape{layer}")
        idx = node("Expand", [pos4, shape], f"idx{layer}")
        key_idx = node("Expand", [pos4_next, shape], f"idx_next{layer}") if fault == "offby1" and layer == 1 else idx
        key = node("ScatterElements", [f"past_key_{layer}", key_idx, proj["k"]], f"key{layer}", axis=2)
        value = node("ScatterElements", [f"past_value_{layer}", idx, proj["v"]], f"present_value_{layer}", axis=2)
        kt = node("Transpose", [key], f"kt{layer}", perm=[0, 1, 3, 2])
        scores = node("Mul", [node("MatMul", [proj["q"], kt], f"qk{layer}"), "scale"], f"scores{layer}")
        mask = visible_beyond if fault == "readbeyond" and layer == 0 else visible
        masked = node("Where", [mask, scores, "lowest"], f"masked{layer}")
        probs = node("Softmax", [masked], f"probs{layer}", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, value], f"ctx{layer}")], f"ctx_t{layer}", perm=[0, 2, 1, 3])
        flat = node("Reshape", [ctx, "flat_shape"], f"ctx_flat{layer}")
        wo = const(f"wo{layer}", _np(model.wo[layer]))
        x = node("Add", [x, node("MatMul", [flat, wo], f"o{layer}")], f"x{layer + 1}")
        key_shape = list(cache)
        if fault == "short" and layer == 0:
            const("short_end", np.array([max_len - 1], dtype=np.int64))
            const("zero", np.array([0], dtype=np.int64))
            const("axis2", np.array([2], dtype=np.int64))
            node("Slice", [key, "zero", "short_end", "axis2"], f"present_key_{layer}")
            key_shape[2] = "short"  # declared open: ORT finds the length when it writes the output
        else:
            node("Identity", [key], f"present_key_{layer}")
        outputs += [helper.make_tensor_value_info(f"present_key_{layer}", TensorProto.FLOAT, key_shape),
                    helper.make_tensor_value_info(f"present_value_{layer}", TensorProto.FLOAT, cache)]
    node("MatMul", [x, "lm"], "logits")
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "seq"])]
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, cache) for n in INPUTS[2:]]
    graph = helper.make_graph(nodes, "shared_step", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="shared_cache_models")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


class MaskedSharedStep(SharedStep):
    """The shared step fed as ORT GenAI's builder feeds its graphs: an
    attention_mask [1, total] instead of positions (the new tokens are the
    last `seq` of `total`)."""

    def forward(self, input_ids, attention_mask, past_key_0, past_value_0, past_key_1, past_value_1):
        seq, total = input_ids.shape[1], attention_mask.shape[1]
        pos = (torch.arange(seq) + (total - seq)).view(1, seq)
        return super().forward(input_ids, pos, past_key_0, past_value_0, past_key_1, past_value_1)

    def make_inputs(self, seed=0, seq=PROMPT):
        ids, _, *pasts = super().make_inputs(seed, seq)
        return (ids, torch.ones(1, seq, dtype=torch.int64), *pasts)


def gqa_step():
    return MaskedSharedStep(0).eval()


GQA_INPUTS = ["input_ids", "attention_mask"] + INPUTS[2:]


def build_gqa_onnx(model, path, fault=None):
    """The masked step with com.microsoft GroupQueryAttention writing each
    layer's cache in place (seqlens_k = sum(mask) - 1, total_sequence_length
    = the mask's length), as the GenAI model builder emits it. fault
    "seqlens": seqlens_k = sum(mask), the convention's off-by-one."""
    assert fault in (None, "seqlens"), fault
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, inputs, outputs, domain=None, **attrs):
        outputs = [outputs] if isinstance(outputs, str) else outputs
        nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], domain=domain, **attrs))
        return outputs[0]

    const("embed", _np(model.embed))
    const("lm", _np(model.lm))
    const("one", np.array([1], dtype=np.int64))
    const("axis1", np.array([1], dtype=np.int64))
    x = node("Gather", ["embed", "input_ids"], "x0")
    sums = node("ReduceSum", ["attention_mask", "axis1"], "mask_sum", keepdims=0)
    seqlens64 = sums if fault == "seqlens" else node("Sub", [sums, "one"], "seqlens64")
    seqlens = node("Cast", [seqlens64], "seqlens_k", to=TensorProto.INT32)
    total64 = node("Gather", [node("Shape", ["attention_mask"], "mask_shape"), "one"], "total64", axis=0)
    total = node("Cast", [node("Squeeze", [total64], "total_scalar")], "total_len", to=TensorProto.INT32)
    cache = [1, HEADS, MAX, HEAD]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "seq", VOCAB])]
    for layer in range(LAYERS):
        qkv = [node("MatMul", [x, const(f"w{n}{layer}", _np(getattr(model, f"w{n}")[layer]))], f"{n}{layer}")
               for n in ("q", "k", "v")]
        attn = node("GroupQueryAttention", [*qkv, f"past_key_{layer}", f"past_value_{layer}", seqlens, total],
                    [f"attn{layer}", f"present_key_{layer}", f"present_value_{layer}"], domain="com.microsoft",
                    num_heads=HEADS, kv_num_heads=HEADS, scale=1 / math.sqrt(HEAD))
        wo = const(f"wo{layer}", _np(model.wo[layer]))
        x = node("Add", [x, node("MatMul", [attn, wo], f"o{layer}")], f"x{layer + 1}")
        outputs += [helper.make_tensor_value_info(f"present_{kv}_{layer}", TensorProto.FLOAT, cache)
                    for kv in ("key", "value")]
    node("MatMul", [x, "lm"], "logits")
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "total"])]
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, cache) for n in INPUTS[2:]]
    graph = helper.make_graph(nodes, "gqa_step", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                          producer_name="shared_cache_models")
    m.ir_version = 8
    onnx.save(m, path)
