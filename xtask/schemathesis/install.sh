#!/usr/bin/env bash
# Installs schemathesis (xtask/schemathesis/requirements.txt) into the
# git-ignored virtual environment .venv-schemathesis at the repository root.
# Run by `cargo xtask schemathesis` when the environment is missing or holds
# another version; safe to run by hand. Needs python3 (3.9+) and PyPI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.venv-schemathesis"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  echo "schemathesis: creating $venv"
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/st" --version
