#!/usr/bin/env bash
# Sets up parity's GPU runtime on a machine with an NVIDIA GPU (issue 44): a
# .venv-gpu/ with onnxruntime-gpu (its wheel carries libonnxruntime.so and the CUDA
# and TensorRT provider libraries) and NVIDIA's CUDA/cuDNN wheels, pinned in
# python/requirements-gpu.txt; then writes .venv-gpu/parity-gpu.env, which sets
# PARITY_ORT_LIBRARY and the LD_LIBRARY_PATH of those libraries:
#
#   scripts/gpu-setup.sh && . .venv-gpu/parity-gpu.env && build/parity env
#   scripts/gpu-check.sh MODELS_DIR OUT      (docs/gpu.md)
#
# With --tensorrt, also TensorRT 10 (tensorrt-cu13 10.16: ORT 1.31.1's TensorRT EP
# links libnvinfer.so.10, which TensorRT 11 does not ship; several GB), for
# --providers tensorrt. A second run does no network work.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$here/.venv-gpu
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q -r "$here/python/requirements-gpu.txt"
if [ "${1:-}" = "--tensorrt" ]; then "$venv/bin/python" -m pip install -q tensorrt-cu13==10.16.1.11; fi
"$venv/bin/python" - "$venv/parity-gpu.env" <<'PY'
import glob, os, sys, sysconfig
site = sysconfig.get_paths()["purelib"]
ort = sorted(glob.glob(os.path.join(site, "onnxruntime", "capi", "libonnxruntime.so.*")))
if not ort:
    sys.exit("gpu-setup: onnxruntime-gpu's libonnxruntime.so is missing from " + site)
dirs = sorted({os.path.dirname(p) for pat in ("nvidia/**/lib*.so*", "tensorrt_libs/lib*.so*")
               for p in glob.glob(os.path.join(site, pat), recursive=True)})
with open(sys.argv[1], "w") as f:
    f.write(f"export PARITY_ORT_LIBRARY={ort[-1]}\n")
    f.write("export LD_LIBRARY_PATH=" + ":".join(dirs + ["${LD_LIBRARY_PATH:-}"]) + "\n")
print(f"gpu-setup: . {sys.argv[1]}  (ORT {ort[-1]})")
PY
