"""python3 -m parity.torch dump MODULE:FACTORY --input NAME=SHAPE[:DTYPE] ... -o DIR

Exit codes as parity's: 0 done, 2 bad usage or bad input (one line on
stderr), 3 the model or the exporter failed (one line on stderr).
"""

import argparse
import importlib
import json
import os
import re
import sys

from .errors import ExportError, one_line, the_rest
from .quiet import captured_output

# exporter.EXPORTERS, spelled out: importing exporter imports torch (seconds),
# and bad usage should be answered at once.
EXPORTERS = ("dynamo", "torchscript")

_DTYPES = {"float32", "float", "float16", "half", "float64", "double", "bfloat16",
           "int64", "long", "int32", "int", "int16", "int8", "uint8", "bool"}


def _version():
    from .._version import version
    return version()


class UsageError(Exception):
    """A user's mistake: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage + error; we want one line
        raise UsageError(message)


def build_parser():
    p = _Parser(prog="python3 -m parity.torch",
                description="Write a PyTorch dump directory (and optionally the ONNX export) for parity.")
    p.add_argument("--version", action="version", version=f"parity.torch {_version()}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    d = sub.add_parser("dump", help="run a model once and dump every module's output")
    d.add_argument("model", metavar="MODULE:FACTORY",
                   help="e.g. torchvision.models:resnet18 (any importable MODULE:FACTORY)")
    d.add_argument("--kwargs", default="{}", help='JSON keyword arguments for the factory, e.g. \'{"weights": null}\'')
    d.add_argument("--input", action="append", default=[], metavar="NAME=SHAPE[:DTYPE]",
                   help="one per model input, in forward order, e.g. images=1x3x224x224:float32 "
                        "(default: the model's make_inputs(seed) if it has one)")
    d.add_argument("-o", "--out", required=True, metavar="DIR", help="dump directory")
    d.add_argument("--seed", type=int, default=0, help="seed for inputs, weights init and the run")
    d.add_argument("--fp64", dest="fp64", action="store_true", default=True,
                   help="write fp64/output_*.npy from a float64 copy of the model (the default)")
    d.add_argument("--no-fp64", dest="fp64", action="store_false", help="do not write the fp64 outputs")
    d.add_argument("--output-names", default=None, metavar="A,B,...", help="ONNX output names")
    d.add_argument("--export", metavar="MODEL.onnx", help="also export to ONNX")
    d.add_argument("--exporter", choices=EXPORTERS, default=None,
                   help="for --export: dynamo (torch.export) or torchscript "
                        "(default: torch's own, dynamo from torch 2.9)")
    d.add_argument("--opset", type=int, default=None, help="opset_version for --export")
    d.add_argument("--dynamic", action="append", default=[], metavar="NAME:AXIS:LABEL",
                   help="dynamic axis for --export, e.g. images:0:batch (both exporters); the dump then "
                        "also holds the model's outputs at other sizes on each dynamic axis")
    d.add_argument("--sizes", action="append", default=[], metavar="NAME=SHAPE[,NAME=SHAPE...]",
                   help="one more sample at these input shapes (repeatable; replaces the sizes picked from "
                        "--dynamic); 'none': the traced sample only")
    d.add_argument("--force", action="store_true", help="replace a dump that DIR already holds")
    d.add_argument("--cover-branches", type=int, default=0, metavar="N",
                   help="also dump samples that take each branch of every torch.cond the traced sample did "
                        "not: up to N candidates of the traced shapes are tried (branches.py)")
    d.add_argument("--generate", type=int, default=0, metavar="N",
                   help="also record PyTorch's greedy decode of N tokens from the inputs (a decode step with a "
                        "KV cache; docs/generation.md)")
    d.add_argument("--kv-map", default=None, metavar="PRESENT=PAST,...",
                   help="for --generate: which output feeds which input at the next step (default: from the names)")
    d.add_argument("--at-step", type=int, default=None, metavar="K",
                   help="dump PyTorch's greedy decode at step K instead of the prompt (its inputs, layers and "
                        "outputs), for `parity locate --reference torch:DIR` at the step a generation check departs")
    d.add_argument("--cache-limit", type=float, default=64, metavar="MIB",
                   help="for --generate: a step's presents past this size are recorded as statistics only")
    d.add_argument("--beams", type=int, default=1, metavar="K",
                   help="for --generate: beam search over K beams (a prompt of batch 1) instead of greedy")
    d.add_argument("--sample", default=None, metavar="top_k=K,top_p=P,temperature=T,seed=S",
                   help="for --generate: seeded top-k/top-p sampling instead of greedy; its random draws are "
                        "recorded and `parity check` replays them (docs/generation.md)")

    from .corpus import add_parser as add_corpus_parser
    add_corpus_parser(sub)
    return p


def parse_input(spec):
    """'images=1x3x224x224:float32' -> ('images', [1, 3, 224, 224], torch.float32)."""

    m = re.fullmatch(r"([^=]+)=(\d+(?:x\d+)*)?(?::(\w+))?", spec)
    if not m:
        raise UsageError(f"--input '{spec}': expected NAME=SHAPE[:DTYPE], e.g. images=1x3x224x224:float32")
    name, shape, dtype = m.group(1), m.group(2), m.group(3) or "float32"
    if dtype not in _DTYPES:
        raise UsageError(f"--input '{spec}': unknown dtype '{dtype}' (one of {', '.join(sorted(_DTYPES))})")
    dims = [int(x) for x in shape.split("x")] if shape else []
    import torch
    return name, dims, getattr(torch, dtype)


def load_factory(spec):
    if spec.count(":") != 1 or not all(spec.split(":")):
        raise UsageError(f"model '{spec}': expected MODULE:FACTORY, e.g. torchvision.models:resnet18")
    module_name, attr = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise UsageError(f"model '{spec}': cannot import module '{module_name}': {e}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"model '{spec}': module '{module_name}' has no '{attr}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"model '{spec}': '{attr}' is not callable")
    return obj


def parse_dynamic(specs):
    axes = {}
    for spec in specs:
        m = re.fullmatch(r"([^:]+):(\d+):([A-Za-z_][\w]*)", spec)
        if not m:
            raise UsageError(f"--dynamic '{spec}': expected NAME:AXIS:LABEL, e.g. images:0:batch")
        axes.setdefault(m.group(1), {})[int(m.group(2))] = m.group(3)
    return axes


def cmd_dump(a):
    factory = load_factory(a.model)
    try:
        kwargs = json.loads(a.kwargs)
    except json.JSONDecodeError as e:
        raise UsageError(f"--kwargs: not JSON: {e}") from None
    if not isinstance(kwargs, dict):
        raise UsageError("--kwargs: expected a JSON object")
    specs = [parse_input(s) for s in a.input]
    dynamic = parse_dynamic(a.dynamic)
    if (a.opset is not None or dynamic or a.exporter) and not a.export:
        raise UsageError("--opset, --dynamic and --exporter need --export MODEL.onnx")
    if a.generate < 0 or (a.kv_map and not (a.generate or a.at_step is not None)):
        raise UsageError("--generate N needs N >= 1; --kv-map needs --generate or --at-step")
    if a.at_step is not None and (a.at_step < 0 or a.generate):
        raise UsageError("--at-step K: K >= 0, without --generate (a dump of one step, for locate)")
    if os.path.exists(os.path.join(a.out, "manifest.json")) and not a.force:
        raise UsageError(f"-o {a.out}: already holds a dump (manifest.json); give --force to replace it")

    import torch  # after the checks above: importing it takes seconds

    from .dumper import dump
    from .exporter import dump_names, export
    from .signature import input_names_for

    torch.manual_seed(a.seed)
    try:
        model = factory(**kwargs)
    except TypeError as e:
        raise UsageError(f"model '{a.model}': {e}") from None
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"model '{a.model}': the factory returned {type(model).__name__}, not a torch.nn.Module")
    # Export what is deployed: the dynamo exporter traces the module in the
    # mode it is in, and a fresh module is in training mode (live Dropout
    # became Bernoulli sampling in the exported mobilenet_v3_small).
    model.eval()

    if specs:
        from .roles import inputs_for
        args = inputs_for(model, specs, a.seed)
        names = [n for n, _, _ in specs]
    elif hasattr(model, "make_inputs"):
        args = tuple(model.make_inputs(a.seed))
        names = input_names_for(model, args, {})
    else:
        raise UsageError(f"model '{a.model}' has no make_inputs(); give --input NAME=SHAPE")
    output_names = a.output_names.split(",") if a.output_names else None

    if a.export:
        ex = {"opset_version": a.opset, "input_names": names, "output_names": output_names,
              "dynamic_axes": dynamic or None}
        ex = {k: v for k, v in ex.items() if v is not None}
        try:
            with captured_output():
                record = export(model, args, a.export, exporter=a.exporter, **ex)
        except ValueError as e:  # a request the exporter cannot express
            raise UsageError(str(e)) from None
        dump_kw = dump_names(record, {"input_names": names, "output_names": output_names})
        _record_dropped(model, args, names, record, a.seed)
    else:
        record, dump_kw = {}, {"input_names": names, "output_names": output_names}
    args, generation = _generation(a, model, args, dump_kw)
    sizes = _sizes(a, model, args, dump_kw["input_names"], record) + _branch_samples(a, model, args)
    manifest = dump(model, args, a.out, fp64=a.fp64, export_info=record or None, seed=a.seed,
                    sizes=sizes, generation=generation, force=True, **dump_kw)  # -o refused above without --force
    _print_summary(a, manifest, record)
    return 0


def _generation(a, model, args, dump_kw):
    """--generate: (the prompt's args, dump()'s generation callable)."""
    if not a.generate and a.at_step is None:
        return args, None
    from .generate import prepare, state_at_step
    try:
        if a.at_step is not None:
            return state_at_step(model, args, dump_kw["input_names"], dump_kw["output_names"], a.at_step, a.seed,
                                 kv_map=a.kv_map), None
        return prepare(model, args, dump_kw["input_names"], dump_kw["output_names"], a.generate, a.seed,
                       kv_map=a.kv_map, fp64=a.fp64, cache_limit=int(a.cache_limit * (1 << 20)), search=_search(a))
    except ValueError as e:
        raise UsageError(str(e)) from None


def _search(a):
    """--beams / --sample: a search.Search, or None (greedy). ValueError: a bad spec."""
    if a.beams == 1 and a.sample is None:
        return None
    if not a.generate:
        raise ValueError("--beams and --sample need --generate N")
    from .search import Search
    kw = {"beams": a.beams}
    if a.sample is not None:
        types = {"top_k": int, "top_p": float, "temperature": float, "seed": int}
        for item in filter(None, a.sample.split(",")):
            key, _, value = item.partition("=")
            if key not in types:
                raise ValueError(f"--sample: '{key}' is not one of {', '.join(types)}")
            kw[key] = types[key](value)
        kw["sample"] = True
    return Search(**kw)


def _sizes(a, model, args, input_names, record):
    """dump()'s sizes: --sizes, else other sizes on the export's dynamic axes."""
    from .exporter import export_sizes
    if a.sizes == ["none"]:
        return []
    try:
        return export_sizes(model, args, input_names, record, a.seed, specs=a.sizes or None)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _record_dropped(model, args, names, record, seed):
    """The export record's `unread_inputs` when the export dropped inputs
    (dropped.py): which of them PyTorch's outputs do not read."""
    from .dropped import dropped_inputs, unread_inputs
    dropped = dropped_inputs(names or [], record)
    if dropped:
        record["unread_inputs"] = unread_inputs(model, args, names, dropped, seed)
        for name in dropped:
            if name in record["unread_inputs"]:
                print(f"note: the exporter dropped input '{name}': unused (PyTorch's outputs do not change with it)")
            else:
                print(f"warning: the exporter dropped input '{name}', which PyTorch's outputs read: the file holds "
                      "its traced value as a constant")


def _branch_samples(a, model, args):
    """--cover-branches N: [(name, args)] taking the cond branches the traced
    sample did not (branches.py); each branch none reached is a warning."""
    if a.cover_branches < 0:
        raise UsageError("--cover-branches N needs N >= 0")
    if not a.cover_branches:
        return []
    from .branches import cover_branches, describe
    try:
        samples, missing, traced = cover_branches(model, args, a.seed, a.cover_branches)
    except ValueError as e:
        raise UsageError(str(e)) from None
    for w in describe(missing, traced, a.cover_branches):
        print(f"warning: {w}")
    return samples


def _print_summary(a, manifest, record):
    sizes = [s["name"] for s in manifest.get("sizes", [])]
    print(f"wrote {a.out}: {len(manifest['layers'])} layer tensors, "
          f"{len(manifest['inputs'])} inputs, {len(manifest['outputs'])} outputs"
          + (f", {len(sizes)} more size(s) ({', '.join(sizes)})" if sizes else "")
          + (f"; exported {a.export} ({record['exporter']})" if a.export else ""))
    gen = manifest.get("generation")
    if gen:
        tokens = [s["tokens"][0] for s in gen["steps"]]
        how = {"beam": "by beam search (beam 0's)", "sample": "by seeded sampling"}.get(
            (gen.get("search") or {}).get("kind"), "greedily")
        print(f"generated {gen['length']} tokens {how}: {' '.join(map(str, tokens))} "
              f"(cache pairs: {len(gen['kv_map'])}{', encoder' if gen.get('encoder') else ''})")
    if record.get("size_relations"):
        print(f"sizes kept together: {'; '.join(record['size_relations'])}")
    for w in _size_one_axes(manifest, record):
        print(f"warning: {w}")
    for w in record.get("tracer_warnings", []):
        print(f"warning: the trace may be wrong for other shapes: {w}")
    for r in manifest.get("sizes_refused", []):
        print(f"warning: size '{r['name']}' left out: the model raised {r['error']}")


def _size_one_axes(manifest, record):
    """Dynamic axes traced at size 1 under the dynamo exporter: torch.export
    fixes sizes 0 and 1, so the file may hold 1 where it names a symbol."""
    if record.get("exporter") != "dynamo":
        return []
    shapes = {d["name"]: d["shape"] for d in manifest.get("input_details", [])}
    out = []
    for name, axes in (record.get("dynamic_axes") or {}).items():
        for axis, label in axes.items():
            shape = shapes.get(name)
            if shape and int(axis) < len(shape) and shape[int(axis)] == 1:
                out.append(f"{name} axis {axis} ('{label}') was traced at size 1: torch.export fixes sizes "
                           "0 and 1, so the export may hold 1 there; trace at 2 or more")
    return out


def main(argv=None):
    try:
        a = build_parser().parse_args(argv)
        if a.command == "dump":
            return cmd_dump(a)
        if a.command == "corpus":
            from .corpus import cmd_corpus
            return cmd_corpus(a, load_factory, UsageError)
        raise UsageError("expected a command: dump or corpus (see --help)")
    except UsageError as e:
        print(f"parity.torch: error: {e}", file=sys.stderr)
        return 2
    except ExportError as e:
        _print_failure(str(e), e.__cause__ or e)
        return 3
    except Exception as e:  # the model failed
        _print_failure(f"failed: {one_line(e)}", e)
        return 3


def _print_failure(summary, error):
    """One line that says what failed, then torch's whole message indented
    below it (torch's advice and the user's line are often past the first)."""
    print(f"parity.torch: {summary}", file=sys.stderr)
    rest = the_rest(error)
    if rest:
        print("  the whole error:", file=sys.stderr)
        print("\n".join(f"    {line}" for line in rest.splitlines()), file=sys.stderr)
