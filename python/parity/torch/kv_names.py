"""Which output of a decode step feeds which input at the next step (the KV
cache convention), found from the names or given by --kv-map.

Conventions found from names (case-insensitive):
  past_key_N / present_key_N, past_value_N / present_value_N
  past_key_values.N.key / present.N.key (optimum's), past.N.key / present.N.key
  past_key_cross_N / present_key_cross_N, past_key_values.N.encoder.key / present.N.encoder.key
A name is reduced to (layer N, key|value, self|cross); an input and an output
with the same reduction and a past/present word each are one pair. Names are
hints: --kv-map present_key_0=past_key_0,... replaces them.
"""

import re

_KV = re.compile(r"(^|[._])(key|value|k|v)s?([._]|$)", re.I)
_LAYER = re.compile(r"(\d+)")
_CROSS = re.compile(r"cross|encoder", re.I)
_PAST = re.compile(r"past|cache|(^|_)kv_in", re.I)
_PRESENT = re.compile(r"present|new|(^|_)kv_out", re.I)


def _reduce(name):
    """(layer, 'key'|'value', cross) for a cache tensor's name; None when the
    name names no layer or no key/value."""
    bare = re.sub(r"past_key_values|key_values", "", name, flags=re.I)
    kind = _KV.search(bare)
    layer = _LAYER.search(bare)
    if not kind or not layer:
        return None
    word = kind.group(2).lower()
    return int(layer.group(1)), "key" if word.startswith("k") else "value", bool(_CROSS.search(name))


def find_kv_pairs(input_names, output_names):
    """[(present output, past input)] paired by their reduced names, in the
    inputs' order; [] when none pair."""
    pasts = {}
    for name in input_names:
        r = _reduce(name) if _PAST.search(name) else None
        if r is not None:
            pasts.setdefault(r, name)
    pairs = []
    for name in output_names:
        r = _reduce(name) if _PRESENT.search(name) else None
        if r is not None and r in pasts:
            pairs.append((name, pasts.pop(r)))
    order = {n: i for i, n in enumerate(input_names)}
    return sorted(pairs, key=lambda p: order[p[1]])


def parse_kv_map(spec, input_names, output_names):
    """'present_key_0=past_key_0,...' -> [(present, past)]; ValueError naming
    a name the model does not have."""
    pairs = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        if item.count("=") != 1:
            raise ValueError(f"--kv-map '{item}': expected PRESENT=PAST, e.g. present_key_0=past_key_0")
        present, past = item.split("=")
        if present not in output_names:
            raise ValueError(f"--kv-map '{item}': the model has no output '{present}' "
                             f"(outputs: {', '.join(output_names)})")
        if past not in input_names:
            raise ValueError(f"--kv-map '{item}': the model has no input '{past}' (inputs: {', '.join(input_names)})")
        pairs.append((present, past))
    return pairs
