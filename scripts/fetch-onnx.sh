#!/usr/bin/env bash
# Builds ONNX 1.23.2's C++ library (checker, shape inference, the IR 11 protobuf
# classes with node metadata_props) from its source release on PyPI, checks the
# archive's sha256, and installs it into .deps/onnx/{include,lib}.
# Debian's libonnx-dev 1.12 predates IR 10 and node metadata, which every torch
# 2.x dynamo export carries. ONNX 1.23 wants CMake >= 3.26 (bookworm has 3.25),
# so the build uses the cmake and ninja pinned in python/requirements.txt (.venv).
# Does nothing when .deps/onnx is already complete.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
VER=1.23.2
SHA256=008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8
URL="https://files.pythonhosted.org/packages/3f/62/bc2dfadb63ecf04cb2d65a6b17751863039d36c65de51d6a3128ab35f1e7/onnx-$VER.tar.gz"
dest="$here/.deps/onnx"
stamp="$dest/.complete-$VER"
[ -f "$stamp" ] && exit 0

CMAKE="$here/.venv/bin/cmake"
NINJA="$here/.venv/bin/ninja"
[ -x "$CMAKE" ] && [ -x "$NINJA" ] || { echo "fetch-onnx: $CMAKE missing: run scripts/venv.sh first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetch-onnx: downloading onnx-$VER.tar.gz (source release) from PyPI"
curl -fsSL --retry 3 -o "$work/onnx.tar.gz" "$URL"
echo "$SHA256  $work/onnx.tar.gz" | sha256sum -c --quiet - || {
  echo "fetch-onnx: sha256 mismatch for onnx-$VER.tar.gz" >&2; exit 1; }
tar -C "$work" -xzf "$work/onnx.tar.gz"
echo "fetch-onnx: building ONNX $VER (a few minutes, once)"
"$CMAKE" -S "$work/onnx-$VER" -B "$work/build" -G Ninja -DCMAKE_MAKE_PROGRAM="$NINJA" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DONNX_ML=ON -DONNX_BUILD_PYTHON=OFF -DONNX_BUILD_TESTS=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX="$dest" >"$work/configure.log" 2>&1 ||
  { tail -30 "$work/configure.log" >&2; exit 1; }
"$CMAKE" --build "$work/build" -j "$(nproc)" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }
rm -rf "$dest"
"$CMAKE" --install "$work/build" >/dev/null
touch "$stamp"
echo "fetch-onnx: ONNX $VER ready in $dest"
