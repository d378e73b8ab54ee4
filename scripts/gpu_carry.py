"""Packs what scripts/gpu-check.sh needs for a GPU machine reached only through a
small file transfer and no network (this project's lent H200: 64 MiB a call).

    python3 scripts/gpu_carry.py --wheel onnxruntime_gpu-1.31.1-...whl --sm 90 \
        --models MODELS_DIR --out DIR [--e2e build/parity_e2e_tests]

Writes DIR/part1/ (the CUDA provider library) and DIR/part2/ (libonnxruntime, the
shared and TensorRT provider libraries, the parity binary with the shared libraries
it needs that are not glibc's or libstdc++'s, zstd, the models, unpack.sh), each
zstd-compressed, each under 64 MiB. Standard library only.

The CUDA provider library (284 MB in onnxruntime-gpu 1.31.1) is mostly GPU code for
six architectures (sm_75 to sm_120); a GPU runs only the code for its own (CUDA
loads the cubin of the device's exact architecture; a cubin of another major
version cannot run on it). --sm keeps that architecture's cubins and any PTX and
zeroes the payloads of the others, the fatbin headers untouched, so the library
keeps its layout and compresses from 187 MB to 53 MB. What the GPU runs is the
wheel's own code, byte for byte.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import zipfile

FATBIN_MAGIC = 0xBA55ED50
KIND_CUBIN = 2
LIMIT = 60 * 1024 * 1024


def _section(data, name):
    """(offset, size) of an ELF64 section by name."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    str_off, = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 0x18)
    for i in range(shnum):
        h = shoff + i * shentsize
        name_off, = struct.unpack_from("<I", data, h)
        end = data.index(b"\0", str_off + name_off)
        if data[str_off + name_off:end].decode() == name:
            off, size = struct.unpack_from("<QQ", data, h + 0x18)
            return off, size
    raise ValueError(f"no section {name}")


def prune_cubins(data, keep_sm):
    """Zeroes the cubin payloads of every architecture but keep_sm; returns the bytes zeroed."""
    off, size = _section(data, ".nv_fatbin")
    p, end, zeroed = off, off + size, 0
    while p + 16 <= end:
        magic, _, header, fat = struct.unpack_from("<IHHQ", data, p)
        if magic != FATBIN_MAGIC:
            p += 8
            continue
        q, q_end = p + header, p + header + fat
        while q < q_end:
            kind, _, entry_header, padded = struct.unpack_from("<HHIQ", data, q)
            sm, = struct.unpack_from("<I", data, q + 28)
            if kind == KIND_CUBIN and sm != keep_sm:
                data[q + entry_header:q + entry_header + padded] = bytes(padded)
                zeroed += padded
            q += entry_header + padded
        p = q_end
    return zeroed


def _zstd(src, dst):
    subprocess.run(["zstd", "-q", "-12", "-T2", "--long=27", "-f", src, "-o", dst], check=True)


def _shared_libs(binary):
    """The non-system shared libraries `binary` loads (ldd), glibc and libstdc++ left to the target."""
    system = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so", "ld-linux", "libstdc++", "libgcc_s",
              "linux-vdso", "libonnxruntime")
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and parts[1].strip().startswith("/"):
            path = parts[1].split()[0]
            if not any(s in os.path.basename(path) for s in system):
                libs.append(path)
    return libs


UNPACK = r"""#!/usr/bin/env bash
# Unpacks part1/ and part2/ into /tmp/gpu (run from the repository root on the GPU machine).
set -euo pipefail
G=/tmp/gpu; mkdir -p $G/ort $G/lib $G/bin
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/tools:${LD_LIBRARY_PATH:-}
Z=$here/tools/zstd
for f in $here/*.zst $here/../part1/*.zst /tmp/gpu/part1/*.zst; do
  [ -f "$f" ] || continue
  name=$(basename "$f" .zst)
  case $name in
    libonnxruntime*) $Z -q -d -f "$f" -o $G/ort/$name ;;
    parity|*_test) $Z -q -d -f "$f" -o $G/bin/$name; chmod +x $G/bin/$name ;;
    models.tar) $Z -q -d -f "$f" -o $G/models.tar; tar -C $G -xf $G/models.tar; rm $G/models.tar ;;
    *) $Z -q -d -f "$f" -o $G/lib/$name ;;
  esac
done
ln -sf libonnxruntime.so.1.31.1 $G/ort/libonnxruntime.so.1
"""

RUN = r"""#!/usr/bin/env bash
# On the GPU machine, from the repository root: unpack, point parity at the GPU
# runtime (the wheel's ORT, CUDA's and cuDNN's libraries from the machine's own
# NVIDIA wheels), run scripts/gpu-check.sh into OUT.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/unpack.sh" || exit 2
G=/tmp/gpu
nv=$(python3 - <<'PY'
import glob, os
dirs = set()
try:
    import nvidia
    for root in nvidia.__path__:
        dirs.update(os.path.dirname(p) for p in glob.glob(os.path.join(root, "**", "lib*.so*"), recursive=True))
except ImportError:
    pass
print(":".join(sorted(dirs)))
PY
)
export LD_LIBRARY_PATH=$G/lib:$nv:${LD_LIBRARY_PATH:-}
export PARITY_ORT_LIBRARY=$G/ort/libonnxruntime.so.1.31.1
# The e2e tests run the parity binary at the path they were built with.
built=$(python3 -c "import re,sys; m=re.search(rb'(/[\x21-\x7e]*/build/parity)\x00', open(sys.argv[1],'rb').read()); print(m.group(1).decode() if m else '')" "$G/bin/parity_e2e_test" 2>/dev/null)
[ -n "$built" ] && mkdir -p "$(dirname "$built")" && ln -sf "$G/bin/parity" "$built"
PARITY_BINARY=$G/bin/parity PARITY_E2E_TESTS=$G/bin/parity_e2e_test scripts/gpu-check.sh "$G/$(ls $G | grep -m1 models)" "$1"
"""


def main(argv=None):
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--wheel", required=True)
    a.add_argument("--sm", type=int, default=90)
    a.add_argument("--models", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--parity", default="build/parity")
    a.add_argument("--e2e", default=None)
    a.add_argument("--part1-models", default="", help="models carried beside the CUDA library (comma-separated)")
    o = a.parse_args(argv)
    part1, part2 = os.path.join(o.out, "part1"), os.path.join(o.out, "part2")
    for d in (part1, part2, os.path.join(part2, "tools")):
        os.makedirs(d, exist_ok=True)
    tmp = os.path.join(o.out, "tmp")
    os.makedirs(tmp, exist_ok=True)
    with zipfile.ZipFile(o.wheel) as w:
        for name in w.namelist():
            base = os.path.basename(name)
            if name.startswith("onnxruntime/capi/libonnxruntime"):
                data = bytearray(w.read(name))
                if base == "libonnxruntime_providers_cuda.so":
                    print(f"gpu_carry: {base}: zeroed {prune_cubins(data, o.sm) / 1e6:.0f} MB of other GPUs' code")
                with open(os.path.join(tmp, base), "wb") as f:
                    f.write(data)
                dest = part1 if base == "libonnxruntime_providers_cuda.so" else part2
                _zstd(os.path.join(tmp, base), os.path.join(dest, base + ".zst"))
    for path in [o.parity] + ([o.e2e] if o.e2e else []):
        _zstd(path, os.path.join(part2, os.path.basename(path) + ".zst"))
    for lib in sorted(set(_shared_libs(o.parity) + (_shared_libs(o.e2e) if o.e2e else []))):
        _zstd(lib, os.path.join(part2, os.path.basename(lib) + ".zst"))
    zstd = shutil.which("zstd")
    shutil.copy(zstd, os.path.join(part2, "tools", "zstd"))
    for lib in _shared_libs(zstd):
        shutil.copy(lib, os.path.join(part2, "tools", os.path.basename(lib)))
    models = os.path.abspath(o.models)
    first = [n for n in (o.part1_models or "").split(",") if n]
    rest = [n for n in sorted(os.listdir(models)) if n not in first]
    for part, names in ((part1, first), (part2, rest)):
        if names:
            tar = os.path.join(tmp, "models.tar")
            subprocess.run(["tar", "-C", os.path.dirname(models), "-cf", tar] +
                           [os.path.join(os.path.basename(models), n) for n in names], check=True)
            _zstd(tar, os.path.join(part, "models.tar.zst"))
    for name, text in (("unpack.sh", UNPACK), ("run.sh", RUN)):
        with open(os.path.join(part2, name), "w") as f:
            f.write(text)
    shutil.rmtree(tmp)
    for d in (part1, part2):
        size = sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(d) for n in ns)
        print(f"gpu_carry: {d}: {size / 1048576:.1f} MiB")
        if size > LIMIT:
            print(f"gpu_carry: {d} is over {LIMIT // 1048576} MiB", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
