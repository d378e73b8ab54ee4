#!/usr/bin/env bash
# Creates .venv/ from the python3 on PATH and installs python/requirements.txt
# (pinned) and python/requirements-zoo.txt (test-only, --no-deps). torch's
# Linux wheels bring NVIDIA's CUDA wheels, several GB: the first run takes
# minutes; a later run only checks the stamp and does nothing while both files
# are unchanged.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"
req="$here/python/requirements.txt"
zoo="$here/python/requirements-zoo.txt"
stamp="$venv/.requirements-$(cat "$req" "$zoo" | sha256sum | cut -c1-16)"
[ -f "$stamp" ] && exit 0
PY=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  echo "venv: creating $venv from $($PY --version 2>&1) ($(command -v "$PY"))"
  "$PY" -m venv "$venv"
fi
echo "venv: installing python/requirements.txt (torch with CUDA wheels: several GB on the first run)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
# Test-only packages (the real exporters' zoo) without their dependencies: their
# declared ones would replace the pinned torch (python/requirements-zoo.txt).
echo "venv: installing python/requirements-zoo.txt (--no-deps)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$zoo"
rm -f "$venv"/.requirements-*
touch "$stamp"
