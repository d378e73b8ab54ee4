#!/usr/bin/env bash
# CPU vs CUDA on the zoo, TF32 on and off (issue 24): `parity check` and
# `parity locate` with the CPU EP as reference and the CUDA EP as target.
# Needs an ORT with the CUDA EP: PARITY_ORT_LIBRARY / --ort-library is not
# there yet, so build parity against onnxruntime-gpu's or npm's GPU package
# (PARITY_ORT_ROOT), or run on a build whose `parity env` lists
# CUDAExecutionProvider. Writes OUT/<model>/{check,locate}_tf32_{on,off}.*
# and OUT/summary.txt (max_abs of each output, the arithmetic parity names).
#
#   scripts/gpu-check.sh [OUT]    (default: build/gpu-check)
# Exit: 0 done (verdicts are data, not failures), 2 no CUDA EP / no zoo.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PARITY=${PARITY_BINARY:-$ROOT/build/parity}
PY=${PARITY_PYTHON:-$ROOT/.venv/bin/python}
OUT=${1:-$ROOT/build/gpu-check}
ZOO=${PARITY_TORCH_CACHE:-$ROOT/build/torch-cache}
MODELS=${MODELS:-resnet18 mobilenet_v3_small squeezenet1_0}

if ! "$PARITY" env | grep -q CUDAExecutionProvider; then
  echo "gpu-check: this parity's ONNX Runtime has no CUDA EP (parity env); nothing to run" >&2
  exit 2
fi
if [ ! -d "$ZOO" ]; then
  PYTHONPATH=$ROOT/python:$ROOT/python/tests "$PY" -m zoo --out "$ZOO" --exporter torchscript \
    --only "$(echo $MODELS | tr ' ' ,)"
fi
mkdir -p "$OUT"
: > "$OUT/summary.txt"
for m in $MODELS; do
  model=$ZOO/$m/torchscript/model.onnx
  inputs=$ZOO/$m/torchscript/inputs.npz
  [ -f "$model" ] || { echo "gpu-check: $model missing (python -m zoo)" >&2; continue; }
  mkdir -p "$OUT/$m"
  for tf32 in 1 0; do
    tag=$([ $tf32 = 1 ] && echo on || echo off)
    set +e
    "$PARITY" check "$model" --inputs "$inputs" --providers cuda --provider-option cuda:use_tf32=$tf32 \
      --report "$OUT/$m/check_tf32_$tag" > "$OUT/$m/check_tf32_$tag.txt" 2>&1
    check_rc=$?
    "$PARITY" locate "$model" --inputs "$inputs" --reference disable --providers cuda \
      --provider-option cuda:use_tf32=$tf32 --json "$OUT/$m/locate_tf32_$tag.json" \
      > "$OUT/$m/locate_tf32_$tag.txt" 2>&1
    locate_rc=$?
    set -e
    why=$(grep -h "^why:\|  why:" "$OUT/$m/check_tf32_$tag.txt" "$OUT/$m/locate_tf32_$tag.txt" | head -1 || true)
    echo "$m tf32=$tag check_exit=$check_rc locate_exit=$locate_rc ${why:-no arithmetic named}" \
      | tee -a "$OUT/summary.txt"
  done
done
