#!/usr/bin/env bash
# Set up (first run only), then run the whole test suite. Extra arguments go to pytest.
# The tests run on one worker process per CPU (pytest-xdist; `-n 0` as an argument runs them in
# this process, `-n 4` on four); tests that share the audio device run on one worker in turn
# (their xdist_group). Live tests use a real audio device: CI starts a JACK dummy server first
# (see .ci/run); elsewhere, without any device, they skip and say why.
# BARKBUS_FUZZ=thorough draws every hypothesis example (CI's slow job); the default draws a share.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
# Bytecode is cached (in the ignored __pycache__ folders): without it every worker and every
# `python -m audio` a test starts compiles the sources and rewrites the test modules' asserts
# again, about 8 s of each worker's collection on this project's machine.
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m pytest tests -n auto --dist loadgroup "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
