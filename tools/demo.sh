#!/usr/bin/env bash
# The main job: set up (first run only), then render the embedded demo installs
# (one per game, in the games' own formats) to out/, with decision logs and timelines.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
mkdir -p out
exec .venv/bin/barkbus demo -o out/demo.wav --log out/demo-decisions.jsonl --timeline out/demo-timeline.png "$@"
