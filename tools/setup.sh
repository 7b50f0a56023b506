#!/usr/bin/env bash
# Idempotent set-up on Debian with Python 3.11 (run as root, or with sudo available):
# the Debian libraries barkbus loads (PortAudio for sounddevice, libvorbisfile & co. for
# pyvgmstream 0.1.1), JACK for the live tests, tmux for the TUI test, espeak-ng for the demo
# builders, liblo-tools (oscsend/oscdump: an independent OSC for the address-table test), Chromium
# and its WebDriver (the profiler page's browser test); then a
# virtual environment .venv with barkbus and its dev extras (editable).
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(libportaudio2 libogg0 libvorbis0a libvorbisfile3 jackd2 tmux espeak-ng liblo-tools chromium chromium-driver)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then
    echo "setup: installing python3-venv"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
    rm -rf .venv
    "$PY" -m venv .venv
  fi
fi
stamp=.venv/.barkbus-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing barkbus and its dependencies into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[dev]"
  touch "$stamp"
fi
