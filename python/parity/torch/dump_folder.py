"""The dump's folder: a dump is written into a fresh folder beside out_dir
and moved into place once whole, and replaces a previous one only on
request (issue 54)."""

import contextlib
import glob
import os
import shutil
import tempfile


def refuse_existing_dump(out_dir, force):
    """Raises FileExistsError when out_dir holds a dump (its manifest.json)
    and force is false: a dump is replaced only on request (issue 54)."""
    if not force and os.path.exists(os.path.join(out_dir, "manifest.json")):
        raise FileExistsError(f"{out_dir}: already holds a dump (manifest.json); pass force=True to replace it")


@contextlib.contextmanager
def staged(out_dir):
    """A fresh folder beside out_dir to write the dump into; moved to out_dir
    when the block ends normally, removed when it raises (then a previous
    dump in out_dir loses its manifest: it was to be replaced, and reads as
    incomplete). Files of out_dir that are not a dump's (an .onnx file
    exported there) are kept; a previous dump's files are replaced, its
    manifest first (a half-replaced dump reads as incomplete)."""
    out_dir = os.path.abspath(out_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(out_dir)}.", suffix=".partial", dir=parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # as os.makedirs would have made it, not mkdtemp's 0700
    try:
        try:
            yield staging
        except BaseException:
            # A dump asked to replace another invalidates it even when it fails.
            if os.path.exists(os.path.join(out_dir, "manifest.json")):
                os.remove(os.path.join(out_dir, "manifest.json"))
            raise
        if not os.path.isdir(out_dir):
            os.rename(staging, out_dir)
            return
        manifest = os.path.join(out_dir, "manifest.json")
        if os.path.exists(manifest):
            os.remove(manifest)
        remove_stale(out_dir, set())
        files = [os.path.relpath(os.path.join(d, f), staging) for d, _, names in os.walk(staging) for f in names]
        for rel in sorted(files, key=lambda r: (r == "manifest.json", r)):  # the manifest last
            os.makedirs(os.path.dirname(os.path.join(out_dir, rel)), exist_ok=True)
            os.replace(os.path.join(staging, rel), os.path.join(out_dir, rel))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def remove_stale(out_dir, written):
    """Deletes the dump files in out_dir that are not in `written`."""
    for pattern in ("layer_*.npy", "input_*.npy", "output_*.npy", "fp64/output_*.npy", "module_inputs/*.npy",
                    "sizes/*/*.npy", "sizes/*/fp64/*.npy", "generate/*.npy"):
        for path in glob.glob(os.path.join(out_dir, pattern)):
            rel = os.path.relpath(path, out_dir).replace(os.sep, "/")
            if rel not in written:
                os.remove(path)
