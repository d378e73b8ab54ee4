#!/usr/bin/env bash
# Creates .venv/ from the python3 on PATH and installs python/requirements.txt
# (pinned). torch's Linux wheels bring NVIDIA's CUDA wheels, several GB: the
# first run takes minutes; a later run only checks the stamp and does nothing
# while requirements.txt is unchanged.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"
req="$here/python/requirements.txt"
stamp="$venv/.requirements-$(sha256sum "$req" | cut -c1-16)"
[ -f "$stamp" ] && exit 0
PY=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  echo "venv: creating $venv from $($PY --version 2>&1) ($(command -v "$PY"))"
  "$PY" -m venv "$venv"
fi
echo "venv: installing python/requirements.txt (torch with CUDA wheels: several GB on the first run)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
rm -f "$venv"/.requirements-*
touch "$stamp"
