"""PYTHONPATH=python:python/tests python -m zoo_real [--out CACHE_DIR] [--only GROUP,...] [--force]"""
import argparse
import sys


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m zoo_real", description="build the real exporters' zoo cache")
    p.add_argument("--out", default=None, metavar="CACHE_DIR")
    p.add_argument("--only", default=None, metavar="GROUP,...")
    p.add_argument("--force", action="store_true")
    a = p.parse_args(argv)
    from . import cache
    only = [n for n in (a.only or "").split(",") if n] or None
    try:
        stamps = cache.build(a.out or cache.default_cache_dir(), only=only, force=a.force, log=print)
    except ValueError as e:
        print(f"zoo_real: error: {e}", file=sys.stderr)
        return 2
    return 0 if all(s["status"] == "ok" for s in stamps.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
