"""tools/build_skate_demo.py: a reproducible build in the game's layout (reduced to one voice here)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from audio.games.skate.formats.install import SkateInstall

ROOT = Path(__file__).resolve().parents[4]
TOOL = ROOT / "tools" / "build_skate_demo.py"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_builder_explains_itself():
    out = subprocess.run(
        [sys.executable, str(TOOL), "--help"], check=True, capture_output=True, text=True
    ).stdout
    assert "--out" in out and "--voices" in out and "espeak-ng" in out


@pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng is not installed (apt-get install espeak-ng)"
)
def test_builder_is_reproducible_byte_for_byte(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        subprocess.run(
            [sys.executable, str(TOOL), "--out", str(out), "--voices", "1"],
            check=True,
            capture_output=True,
            cwd=tmp_path,
        )
    fa, fb = _files(a), _files(b)
    assert set(fa) == {"README.txt", "plaza.toml", "data/audio/english/livingworldspeech.big"}
    assert fa == fb
    with SkateInstall.open(a) as inst:
        bank = inst.bank("livingworld")
        assert bank.problems == []
        assert bank.voice_ids() == [59]
        pcm, sample_rate = bank.decode_take(bank.clips[0], 0)
        assert sample_rate == 36_000 and pcm.size > 0
