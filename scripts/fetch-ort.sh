#!/usr/bin/env bash
# Fetches ONNX Runtime 1.29 (Microsoft's release binaries and official headers,
# carried by the npm package com.github.asus4.onnxruntime@0.4.9), checks npm's
# integrity hash, and lays it out like an official release tarball:
#   .deps/onnxruntime/{include,lib}
# Does nothing when that layout is already complete.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
PKG=com.github.asus4.onnxruntime
VER=0.4.9
INTEGRITY='sha512-BkzxduSZ9IkeDP6Q8lz2TFU2ie7hSSvS7ZIfzMooExoq0CNzJnuuGaUJ7IsojBgqO4ouD1jXah8OYyJbCN29Fg=='
dest="$here/.deps/onnxruntime"
stamp="$dest/.complete-$VER"
[ -f "$stamp" ] && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetch-ort: downloading $PKG@$VER from the npm registry"
(cd "$work" && npm pack --silent "$PKG@$VER" >/dev/null)
tgz=$(ls "$work"/*.tgz)
actual="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [ "$actual" != "$INTEGRITY" ]; then
  echo "fetch-ort: integrity mismatch for $tgz: got $actual" >&2
  exit 1
fi
hdr='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
tar -C "$work" -xzf "$tgz" package/Plugins/Linux/x64 "$hdr"
rm -rf "$dest"
mkdir -p "$dest/include" "$dest/lib"
cp "$work/$hdr"/*.h "$dest/include/"
cp "$work"/package/Plugins/Linux/x64/*.so "$dest/lib/"
ln -sf libonnxruntime.so "$dest/lib/libonnxruntime.so.1"
touch "$stamp"
echo "fetch-ort: ONNX Runtime ready in $dest"
