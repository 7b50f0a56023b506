#!/usr/bin/env bash
# Set up (first run only), then run the whole test suite. Extra arguments go to pytest.
# Live tests use a real audio device: CI starts a JACK dummy server first (see .ci/run);
# elsewhere, without any device, they skip and say why.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
.venv/bin/python -m pytest tests "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "test.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$rc"
