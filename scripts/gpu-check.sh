#!/usr/bin/env bash
# The GPU measurements of docs/gpu.md (issue 44), one script on a machine with an
# NVIDIA GPU: for each model of MODELS_DIR (scripts/gpu_models.py), `parity check`
# and `parity locate` of
#   - CPU (the unfused reference, `disable`) vs CUDA at `all`, TF32 as ORT's default
#     (use_tf32=1) and with use_tf32=0;
#   - CUDA at `disable` vs CUDA at `all` (the fusions the CUDA EP makes);
#   - the TensorRT EP where its libraries load (else the one line parity says);
# then the GPU tests of the C++ suite (Cuda.*) when their binary is given, and the
# table (scripts/gpu_summary.py).
#
#   scripts/gpu-check.sh MODELS_DIR OUT
#
# Needs an ORT with the CUDA EP: PARITY_ORT_LIBRARY (scripts/gpu-setup.sh prints it
# for onnxruntime-gpu, with the LD_LIBRARY_PATH of CUDA's and cuDNN's libraries).
# PARITY_BINARY: the parity to run (default build/parity). PARITY_E2E_TESTS: the
# e2e test binary (optional). GPU_CHECK_MODELS: which models (default: all).
# GPU_CHECK_TIMEOUT: seconds per command (120); GPU_CHECK_BUDGET: seconds for the
# whole script, after which the remaining runs are listed as not run (0: none).
# Exit: 0 done (verdicts are data, not failures), 2 no CUDA EP or no models.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PARITY=${PARITY_BINARY:-$ROOT/build/parity}
MODELS_DIR=${1:?usage: scripts/gpu-check.sh MODELS_DIR OUT}
OUT=${2:?usage: scripts/gpu-check.sh MODELS_DIR OUT}
PER_RUN=${GPU_CHECK_TIMEOUT:-120}
BUDGET=${GPU_CHECK_BUDGET:-0}  # seconds for the whole script; 0: no limit
export PARITY_EP_DISCOVERY=0  # no plugin EP: the runs compare ORT's built-in EPs
mkdir -p "$OUT/runs"

{ date -u +"date %Y-%m-%dT%H:%M:%SZ"; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$PARITY" env 2>&1 | head -30; } > "$OUT/environment.txt" 2>&1
if ! grep -q CUDAExecutionProvider "$OUT/environment.txt"; then
  echo "gpu-check: this parity's ONNX Runtime has no CUDA EP (parity env in $OUT/environment.txt)" >&2
  exit 2
fi

cat > "$OUT/cuda_disable.json" <<'EOF'
{"opt": "disable", "providers": ["cuda"]}
EOF

# run MODEL RUN ARGS...: one parity command into runs/MODEL/RUN/ (stdout, stderr,
# exit, seconds), bounded in time; skipped once the script's budget is spent.
run() {
  local model=$1 name=$2; shift 2
  local d="$OUT/runs/$model/$name"
  mkdir -p "$d"
  if [ "$BUDGET" -gt 0 ] && [ $SECONDS -ge "$BUDGET" ]; then
    echo "not run: the script's time budget ($BUDGET s) was spent" > "$d/stderr.txt"; echo 124 > "$d/exit"
    return
  fi
  local start=$SECONDS
  timeout "$PER_RUN" "$PARITY" "$@" > "$d/stdout.txt" 2> "$d/stderr.txt"
  echo $? > "$d/exit"
  echo $((SECONDS - start)) > "$d/seconds"
  echo "gpu-check: $model $name: exit $(cat "$d/exit") in $(cat "$d/seconds") s"
}

models=""
for m in ${GPU_CHECK_MODELS:-$(ls "$MODELS_DIR")}; do [ -f "$MODELS_DIR/$m/model.onnx" ] && models="$models $m"; done
[ -n "$models" ] || { echo "gpu-check: no MODEL/model.onnx under $MODELS_DIR (scripts/gpu_models.py)" >&2; exit 2; }

# The GPU tests of the C++ suite first: they are short.
if [ -n "${PARITY_E2E_TESTS:-}" ] && [ -x "${PARITY_E2E_TESTS}" ]; then
  timeout 240 "$PARITY_E2E_TESTS" --gtest_filter='Cuda*' > "$OUT/gpu-tests.txt" 2>&1
  echo "gpu-check: GPU tests exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/gpu-tests.txt" | tr '\n' ' '))"
fi

# Phases in order of what matters most, every model in each, so that a budget
# cut leaves whole phases: check CPU vs CUDA (TF32 default), the same with
# use_tf32=0, locate CPU vs CUDA, CUDA disable vs all, TensorRT fp16.
m_args() { echo "$MODELS_DIR/$1/model.onnx --inputs $MODELS_DIR/$1/inputs.npz"; }
for m in $models; do
  run "$m" check_cpu_vs_cuda check $(m_args "$m") --providers cuda --no-locate --runs 10 \
    --report "$OUT/runs/$m/check_cpu_vs_cuda/report"
done
for m in $models; do
  run "$m" check_cpu_vs_cuda_tf32_off check $(m_args "$m") --providers cuda --provider-option cuda:use_tf32=0 \
    --no-locate --runs 10 --report "$OUT/runs/$m/check_cpu_vs_cuda_tf32_off/report"
done
for m in $models; do
  run "$m" locate_cpu_vs_cuda locate $(m_args "$m") --reference disable --providers cuda --no-ablation \
    --json "$OUT/runs/$m/locate_cpu_vs_cuda/locate.json"
done
for m in $models; do
  run "$m" check_cuda_disable_vs_all check $(m_args "$m") --reference-config "$OUT/cuda_disable.json" \
    --providers cuda --no-locate --runs 10 --report "$OUT/runs/$m/check_cuda_disable_vs_all/report"
  run "$m" locate_cuda_disable_vs_all locate $(m_args "$m") --reference "$OUT/cuda_disable.json" --providers cuda \
    --no-ablation --json "$OUT/runs/$m/locate_cuda_disable_vs_all/locate.json"
done
# TensorRT: fp16 engines, the engine cache inside the output.
first=${models# }; first=${first%% *}
run "$first" check_cpu_vs_tensorrt_fp16 check $(m_args "$first") --providers tensorrt \
  --provider-option tensorrt:trt_fp16_enable=1 --provider-option tensorrt:trt_engine_cache_enable=1 \
  --provider-option "tensorrt:trt_engine_cache_path=$OUT/runs/$first/trt_cache" --no-locate \
  --report "$OUT/runs/$first/check_cpu_vs_tensorrt_fp16/report"

python3 "$ROOT/scripts/gpu_summary.py" "$OUT/runs" > "$OUT/gpu-table.md" && cat "$OUT/gpu-table.md"
exit 0
