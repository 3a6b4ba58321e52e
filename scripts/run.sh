#!/usr/bin/env bash
# Set up a virtualenv with the project, then run the server. Extra arguments are passed on
# (`bash scripts/run.sh --port 9000`).
#
# The install runs only when needed: a fresh .venv, or a pyproject.toml that changed since
# the last install here (its hash is kept in .venv/.aluette-install). The install is
# editable, so edits to the code need no reinstall; a second start goes straight to the
# server.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.aluette-install
want="$(.venv/bin/python -c 'import hashlib; print(hashlib.sha256(open("pyproject.toml", "rb").read()).hexdigest())')"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$want" != "$have" ] || [ ! -x .venv/bin/aluette-server ]; then
  rm -f "$stamp"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e .
  echo "$want" > "$stamp"
fi
exec .venv/bin/aluette-server "$@"
