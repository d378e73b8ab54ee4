"""Size relations between a model's dynamic axes, learned from one traced
sample and the dynamic-axes declaration.

Changing one dynamic size at a time is wrong for a decode step with a KV
cache: its attention mask is as long as the past plus the new tokens, and
every cache holds the same past. learn() finds:
  - shared symbols: axes that carry one label change together;
  - one past: the caches' (role "cache", roles.py) axes at the same index
    with the same traced size are one length, whatever their labels;
  - one sequence: the token inputs' (ids, positions) axes at the same index
    with the same traced size, likewise;
  - sums: a label whose traced size is the sum of two others', when one of
    them is a cache's length or the ONNX file spells the sum ("past + seq",
    as the dynamo exporter names a derived dim): attention_mask[1] = past +
    seq. Among several such pairs, the one a mask and a token input back.
Axes only ever at index 0 (batch) take part in no sum.
Relations.joint() then gives each free label other sizes (a cache's length
0 too) and the sums their values, so that every sample fits the model.
"""

import itertools
import re

from .roles import role_from_name

_SUM = re.compile(r"^\s*([A-Za-z_]\w*)\s*\+\s*([A-Za-z_]\w*)\s*$")


class Relations:
    """traced: {label: traced size}; where: {label: [(input, axis)]};
    alias: {label: the label it is one with}; sums: {label: (a, b)};
    past: labels that are a cache's length."""

    def __init__(self, traced, where):
        self.traced, self.where = traced, where
        self.alias, self.sums, self.past, self.notes = {}, {}, set(), []

    def canon(self, label):
        while label in self.alias:
            label = self.alias[label]
        return label

    def free(self):
        """Labels whose sizes are chosen (the rest follow), in first-seen order."""
        return [lb for lb in self.traced if lb not in self.alias and lb not in self.sums]

    def resolve(self, chosen):
        """{label: size} for every label, from sizes of some free labels
        (the others at their traced sizes)."""
        sizes = {lb: chosen.get(lb, self.traced[lb]) for lb in self.free()}
        for _ in range(len(self.sums) + 1):  # sums of sums settle in as many passes
            for lb, (a, b) in self.sums.items():
                if self.canon(a) in sizes and self.canon(b) in sizes:
                    sizes[lb] = sizes[self.canon(a)] + sizes[self.canon(b)]
        return {lb: sizes[self.canon(lb)] for lb in self.traced if self.canon(lb) in sizes}

    def joint(self, other_sizes):
        """[(sample name, {label: size})]: for each free label, each of
        other_sizes(traced) (and 0 first for a cache's length), the rest
        following; named after the free label ("past0")."""
        out = []
        for lb in self.free():
            sizes = list(other_sizes(self.traced[lb]))
            if lb in self.past and self.traced[lb] != 0 and 0 not in sizes:
                sizes.insert(0, 0)
            for size in sizes:
                out.append((f"{lb}{size}", self.resolve({lb: size})))
        return out

    def describe(self):
        """The relations in words, for the record: ["past_value_0[2] = past_key_0[2]", "attention_mask[1] = past + seq"]."""
        return list(self.notes)


def learn(input_shapes, dynamic_axes, roles=None, file_dims=None):
    """input_shapes: {input: traced shape}; dynamic_axes: {name: {"axis":
    label}} (outputs ignored); roles: {input: role} (default: from names);
    file_dims: {name: {"axis": dim_param}} of the ONNX file (sums it spells)."""
    roles = dict(roles or {n: role_from_name(n) for n in input_shapes})
    traced, where = {}, {}
    for name, axes in (dynamic_axes or {}).items():
        shape = input_shapes.get(name)
        for axis, label in (axes.items() if shape is not None else ()):
            a = int(axis)
            if 0 <= a < len(shape):
                traced.setdefault(label, shape[a])
                where.setdefault(label, []).append((name, a))
    rel = Relations(traced, where)
    _unify(rel, roles, {"cache"}, "one past length")
    rel.past = {rel.canon(lb) for lb, spots in where.items()
                if any(roles.get(n) == "cache" and a != 0 for n, a in spots)}
    _unify(rel, roles, {"ids", "positions"}, "one sequence")
    _find_sums(rel, roles, _spelled_sums(file_dims))
    if not rel.past:  # no cache: a mask is as long as the tokens
        _unify(rel, roles, {"ids", "positions", "mask"}, "mask as long as the tokens")
    return rel


def _unify(rel, roles, kinds, why):
    """Labels on inputs of these roles, at the same axis index (not 0) with
    the same traced size, become one."""
    spots = {}
    for lb, places in rel.where.items():
        for name, axis in places:
            if roles.get(name) in kinds and axis != 0 and rel.canon(lb) not in rel.sums:
                spots.setdefault((axis, rel.traced[lb]), []).append((rel.canon(lb), name))
    for (axis, _), found in spots.items():
        head, head_name = found[0]
        for lb, name in found[1:]:
            if rel.canon(lb) != rel.canon(head):
                rel.alias[rel.canon(lb)] = rel.canon(head)
                rel.notes.append(f"{name}[{axis}] = {head_name}[{axis}] ({why})")


def _spelled_sums(file_dims):
    out = set()
    for axes in (file_dims or {}).values():
        for dim in axes.values():
            m = _SUM.match(str(dim))
            if m:
                out.add(frozenset(m.groups()))
    return out


def _find_sums(rel, roles, spelled):
    """rel.sums[L] = (A, B) where traced L = A + B and the evidence holds."""
    batch = {lb for lb, places in rel.where.items() if all(a == 0 for _, a in places)}
    labels = [lb for lb in rel.free() if lb not in batch]

    def on(lb, kinds):
        return any(roles.get(n) in kinds for x in rel.where if rel.canon(x) == lb for n, _ in rel.where[x])

    for total in labels:
        best = []
        for a, b in itertools.combinations([x for x in labels if x != total], 2):
            if rel.traced[a] + rel.traced[b] != rel.traced[total]:
                continue
            if not ({a, b} & rel.past or frozenset((a, b)) in spelled):
                continue
            score = on(total, {"mask"}) + on(a, {"ids", "positions"}) + on(b, {"ids", "positions"})
            best.append((score, a, b))
        best.sort(key=lambda t: -t[0])
        if best and (len(best) == 1 or best[0][0] > best[1][0]):
            _, a, b = best[0]
            a, b = (a, b) if a in rel.past else (b, a)
            rel.sums[total] = (a, b)
            name, axis = rel.where[total][0]
            rel.notes.append(f"{name}[{axis}] = {a} + {b}")
