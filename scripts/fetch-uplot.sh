#!/usr/bin/env bash
# Fetches uPlot (the charting library inlined into report.html at build time)
# from the npm registry, checks npm's integrity hash, and keeps the files the
# build embeds:
#   .deps/uplot/{uPlot.iife.min.js,uPlot.min.css,LICENSE}
# Does nothing when they are already there. The report needs no network when
# viewed: CMake turns these files into a header (src/report/assets/embed.cmake).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
PKG=uplot
VER=1.6.32
INTEGRITY='sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw=='
dest="$here/.deps/uplot"
stamp="$dest/.complete-$VER"
[ -f "$stamp" ] && exit 0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "fetch-uplot: downloading $PKG@$VER from the npm registry"
(cd "$work" && npm pack --silent "$PKG@$VER" >/dev/null)
tgz=$(ls "$work"/*.tgz)
actual="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [ "$actual" != "$INTEGRITY" ]; then
  echo "fetch-uplot: integrity mismatch for $tgz: got $actual" >&2
  exit 1
fi
tar -C "$work" -xzf "$tgz" package/dist/uPlot.iife.min.js package/dist/uPlot.min.css package/LICENSE
rm -rf "$dest"
mkdir -p "$dest"
cp "$work"/package/dist/uPlot.iife.min.js "$work"/package/dist/uPlot.min.css "$work"/package/LICENSE "$dest/"
touch "$stamp"
echo "fetch-uplot: uPlot ready in $dest"
