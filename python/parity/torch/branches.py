"""`dump --cover-branches N`: samples that take each branch of every torch.cond.

ONNX's If runs one branch per sample, and a check can judge a branch against
PyTorch only on a dumped sample that took it (docs/locate.md "Control
flow"): the traced sample alone leaves the other branch of each cond unjudged,
and the check NOT JUDGED. Here PyTorch runs candidates of the traced sample's
shapes (the traced float inputs negated, then seeded random ones at scales 1,
10 and 0.1) with torch.cond run eagerly and recorded (control_flow.eager_cond)
until every cond call site has been seen taking both branches or N candidates
are spent; each candidate that took a branch not seen before becomes one more
dumped sample ("branch1", ...), written like the samples of --sizes and judged
the same way. A branch no candidate reaches is named, for the user to give
inputs that reach it.
"""

import torch

from .control_flow import eager_cond
from .sizes import make_like


def branches_taken(model, args):
    """{call site: {True/False, ...}} of one eager run of `model(*args)`."""
    taken = []
    with torch.no_grad(), eager_cond(taken):
        model(*args)
    out = {}
    for site, then in taken:
        out.setdefault(site, set()).add(then)
    return out


def _candidates(args, seed, tries):
    """Up to `tries` arg tuples of the traced shapes: negated float inputs,
    then random normal ones (seeded) at scales 1, 10, 0.1 in turn; integer
    and bool inputs keep the traced values (token ids, masks)."""
    floats = [isinstance(a, torch.Tensor) and a.is_floating_point() for a in args]
    if not any(floats):
        return
    yield tuple(-a if f else a for a, f in zip(args, floats))
    g = torch.Generator().manual_seed(seed + 1)
    for k in range(1, tries):
        scale = (1.0, 10.0, 0.1)[k % 3]
        yield tuple(make_like(a, list(a.shape), g) * scale if f else a for a, f in zip(args, floats))


def cover_branches(model, args, seed, tries):
    """([(sample name, args)], {site: branches never taken}, {site: taken by
    the traced sample}). `args`: the traced positional tensors."""
    if not isinstance(args, tuple) or not all(isinstance(a, torch.Tensor) for a in args):
        raise ValueError("--cover-branches: the model's inputs must be one tensor each (no nested or keyword inputs)")
    traced = branches_taken(model, args)
    seen = {site: set(b) for site, b in traced.items()}
    samples = []
    for candidate in _candidates(args, seed, tries):
        if all(len(b) == 2 for b in seen.values()):
            break
        try:
            got = branches_taken(model, candidate)
        except Exception:  # noqa: BLE001 -- a candidate the model refuses takes no branch
            continue
        new = any(then not in seen.get(site, set()) for site, b in got.items() for then in b)
        for site, b in got.items():
            seen.setdefault(site, set()).update(b)
        if new:
            samples.append((f"branch{len(samples) + 1}", candidate))
    missing = {site: {True, False} - b for site, b in seen.items() if len(b) < 2}
    return samples, missing, traced


def describe(missing, traced, tries):
    """Warnings: one per cond site with a branch no candidate took."""
    out = []
    for site, branches in missing.items():
        names = ", ".join("true_fn" if b else "false_fn" for b in sorted(branches, reverse=True))
        out.append(f"torch.cond at {site.split('|')[0]} (true_fn) / {site.split('|')[1]} (false_fn): no sample of "
                   f"{tries} tried took its {names}; give inputs that do (--input, or make_inputs(seed)) and "
                   "dump them, or `parity check` stays NOT JUDGED for that branch")
    if not traced:
        out.append("--cover-branches: no torch.cond ran eagerly on the traced sample (a cond bound before the "
                   "dump, `from torch import cond`, is not seen); no sample added")
    return out
