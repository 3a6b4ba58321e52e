#!/usr/bin/env bash
# Set up a virtualenv with the project, then run it. Extra arguments are passed on.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
exec .venv/bin/aluette-server "$@"
