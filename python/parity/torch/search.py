"""How a decode step's tokens are chosen (dump --generate N; docs/generation.md
"Beam search and sampling"): greedy, beam search over K beams, or seeded
top-k/top-p sampling, computed in float64 from a step's last logits so that
`parity check` replays the same choice on ONNX Runtime's logits
(src/engine/generate/decode_search.cc) with the same random draws:

  greedy  the argmax of each row (the first on ties);
  beam    K beams of one prompt: each beam's score plus the log-softmax of
          its row, the K best of all beams x vocabulary (stable: the lower
          index on ties) give each new beam its origin beam and its token;
          the prefill's single row seeds the K beams;
  sample  per row one draw u ~ U[0, 1) from torch.Generator(seed), recorded;
          the probabilities softmax(logits / temperature), those outside the
          top_k largest (stable order) and past the smallest prefix (in
          descending order) reaching top_p set to 0; the token is the first
          vocabulary index whose cumulative kept probability exceeds u times
          their sum.
"""

import torch


class Search:
    def __init__(self, beams=1, top_k=0, top_p=1.0, temperature=1.0, seed=0, sample=False):
        if beams < 1 or top_k < 0 or not 0 < top_p <= 1 or temperature <= 0:
            raise ValueError("--beams K >= 1, top_k >= 0, 0 < top_p <= 1, temperature > 0")
        if sample and beams > 1:
            raise ValueError("--beams and --sample: one or the other")
        self.beams, self.top_k, self.top_p, self.temperature, self.sample = beams, top_k, top_p, temperature, sample
        self.seed = seed
        self.generator = torch.Generator().manual_seed(seed)
        self.scores = None

    @property
    def kind(self):
        return "sample" if self.sample else "beam" if self.beams > 1 else "greedy"

    def record(self):
        return {"kind": self.kind, "beams": self.beams, "top_k": self.top_k, "top_p": self.top_p,
                "temperature": self.temperature, "seed": self.seed}

    def choose(self, last):
        """(tokens, origins or None, draws or None) from `last` [rows, vocab]."""
        if self.kind == "beam":
            return self._beam(last)
        if self.kind == "sample":
            u = torch.rand(last.shape[0], generator=self.generator, dtype=torch.float64)
            return torch.stack([_sample_row(r, x, self) for r, x in zip(last.double(), u)]), None, u.tolist()
        return last.argmax(dim=-1), None, None

    def _beam(self, last):
        logp = torch.log_softmax(last.double(), dim=-1)
        if self.scores is not None:
            logp = logp + self.scores[:, None]
        vocab = logp.shape[-1]
        order = torch.sort(-logp.reshape(-1), stable=True).indices[:self.beams]
        self.scores = logp.reshape(-1)[order]
        return order % vocab, order // vocab, None


def _sample_row(logits, u, s):
    probs = torch.softmax(logits / s.temperature, dim=-1)
    order = torch.sort(-probs, stable=True).indices
    keep = torch.zeros_like(probs, dtype=torch.bool)
    ranked = probs[order]
    n = len(ranked) if s.top_k == 0 else min(s.top_k, len(ranked))
    if s.top_p < 1:
        reach = torch.cumsum(ranked, 0)
        n = min(n, int((reach < s.top_p).sum()) + 1)
    keep[order[:n]] = True
    kept = torch.where(keep, probs, torch.zeros_like(probs))
    cum = torch.cumsum(kept, 0)
    idx = int((cum <= u * cum[-1]).sum())
    return torch.tensor(min(idx, len(probs) - 1))


def reorder(state, origins, names):
    """Each of `names` in `state` (batch first) with its rows taken at `origins`."""
    out = dict(state)
    for n in names:
        t = state[n]
        if isinstance(t, torch.Tensor) and t.dim() > 0:
            out[n] = t.index_select(0, origins.to(torch.int64)) if t.shape[0] > 0 else t
    return out
