#!/usr/bin/env bash
# Installs everything parity needs on a fresh Debian machine: Debian packages
# (skipped when already present) and ONNX Runtime from the npm registry
# (skipped when already unpacked). A second run does no network work.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# ONNX's C++ library is built from source (scripts/fetch-onnx.sh: Debian's
# libonnx-dev 1.12 predates IR 10); torch, onnx, numpy, pytest and the rest of
# the Python side come pinned from PyPI into .venv/ (scripts/venv.sh).
DEBS=(build-essential cmake libprotobuf-dev protobuf-compiler
      nlohmann-json3-dev libcli11-dev libfmt-dev libzip-dev zlib1g-dev
      libgtest-dev libgmock-dev libbenchmark-dev libssl-dev
      python3 python3-venv curl
      libonnx-testdata openssl
      chromium  # report tests: headless HTML
      clang-16 libclang-rt-16-dev)  # libFuzzer (scripts/fuzz.sh)

missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: any npm on PATH will do (machines often carry Node.js from elsewhere,
# whose npm conflicts with Debian's package).
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

"$here/scripts/fetch-ort.sh"
"$here/scripts/fetch-uplot.sh"
