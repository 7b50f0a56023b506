#!/usr/bin/env bash
# Build the wheel, install it into a fresh virtual environment outside the checkout and run
# `barkbus graph list` and `barkbus demo` there, with no checkout on the path: proves the
# graphs, demo installs and scenarios ship inside the package.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
.venv/bin/python -m pip wheel -q --no-deps -w "$work/dist" . >/dev/null
wheel=$(ls "$work"/dist/barkbus-*.whl)
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$wheel" >/dev/null
cd "$work"
env -u PYTHONPATH "$work/venv/bin/barkbus" graph list | grep -q play_voice
env -u PYTHONPATH "$work/venv/bin/barkbus" demo -o "$work/out/demo.wav" --quiet >"$work/demo.log"
ls "$work"/out/demo-*.wav >/dev/null
echo "wheel check: $(basename "$wheel") installed outside the checkout; graph list and demo ran ($(ls "$work"/out/*.wav | wc -l) WAVs)"
