"""PYTHONPATH=python:python/tests python -m zoo --out CACHE_DIR [--exporter dynamo,torchscript] [--only NAME,...]

Builds the shared cache of exported test models and their dumps (cache.py).
Exit codes: 0 done (failed entries are recorded, not fatal), 2 bad usage (one
line on stderr).
"""
import argparse
import sys

EXPORTERS = ("dynamo", "torchscript")  # parity.torch.exporter's, without importing torch


class UsageError(Exception):
    """A user's mistake: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser():
    z = _Parser(prog="python3 -m zoo", description="build the shared cache of exported test models and their dumps")
    z.add_argument("--out", default=None, metavar="CACHE_DIR",
                   help="cache directory (default: $PARITY_TORCH_CACHE, else <repo>/build/torch-cache)")
    z.add_argument("--exporter", default=",".join(EXPORTERS), metavar="E,...",
                   help="exporters to use (default: dynamo,torchscript)")
    z.add_argument("--only", default=None, metavar="NAME,...", help="only these models")
    z.add_argument("--force", action="store_true", help="rebuild entries that are cached")
    z.add_argument("--list", action="store_true", help="list the models and exit")
    return z


def run(a):
    exporters = [e for e in a.exporter.split(",") if e]
    bad = [e for e in exporters if e not in EXPORTERS]
    if bad or not exporters:
        raise UsageError(f"unknown exporter '{bad[0] if bad else a.exporter}' (one of {', '.join(EXPORTERS)})")
    from . import cache

    if a.list:
        for name, spec in cache.ZOO.items():
            print(f"{name}: {spec.about}")
        return 0
    only = [n for n in (a.only or "").split(",") if n] or None
    out = a.out or cache.default_cache_dir()
    try:
        summary = cache.build(out, exporters=exporters, only=only, force=a.force, log=print)
    except ValueError as e:
        raise UsageError(str(e)) from None
    wanted = [f"{n}/{e}" for n in (only or cache.ZOO) for e in exporters]
    failed = [k for k in wanted if summary["entries"].get(k, {}).get("status") != "ok"]
    print(f"zoo {out}: {len(wanted) - len(failed)} of {len(wanted)} exported and dumped"
          + (f"; failed: {', '.join(failed)}" if failed else "")
          + f"; {summary['last_build_seconds']:.1f} s")
    return 0


def main(argv=None):
    try:
        return run(build_parser().parse_args(argv))
    except UsageError as e:
        print(f"zoo: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
