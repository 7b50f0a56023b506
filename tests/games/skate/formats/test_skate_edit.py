"""``skate replace`` / ``skate add-take``: a new line in EA-XMA2, every other take unchanged byte for byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audio.cli import main
from audio.games.skate.cli import DEMO_ROOT
from audio.games.skate.formats.install import SkateInstall

CLIP = "501_59_busm1_Warn_n"


@pytest.fixture()
def line(tmp_path: Path) -> tuple[Path, np.ndarray]:
    sample_rate = 22050  # resampled to the clip's 36 kHz by the command
    t = np.arange(int(0.4 * sample_rate)) / sample_rate
    x = 0.4 * np.sin(2 * np.pi * 300 * t) * np.hanning(t.size)
    path = tmp_path / "line.wav"
    sf.write(path, x, sample_rate, subtype="FLOAT")
    return path, x


def _all_takes(root: Path) -> dict[tuple[str, int], tuple[bytes, bytes]]:
    with SkateInstall.open(root) as inst:
        bank = inst.bank()
        return {(c.name, k): bank.take_bytes(c, k) for c in bank.clips for k in range(len(c.takes))}


def test_replace_swaps_one_take_and_keeps_every_other_take_byte_for_byte(tmp_path: Path, line) -> None:
    path, x = line
    out = tmp_path / "new"
    assert main(["skate", "replace", CLIP, "1", str(path), "-o", str(out)]) == 0
    before, after = _all_takes(DEMO_ROOT), _all_takes(out)
    assert before.keys() == after.keys()
    changed = [k for k in before if before[k] != after[k]]
    assert changed == [(CLIP, 1)]
    with SkateInstall.open(out) as inst:
        bank = inst.bank()
        clip = bank.clip(CLIP)
        assert clip.takes[1].codec == 3 and clip.header.take_count == 3
        pcm, sample_rate = bank.decode_take(clip, 1)  # FFmpeg's XMA2 decoder
        assert sample_rate == 36000 and pcm.shape == (round(x.size * 36000 / 22050),)
        assert 0.3 < np.abs(pcm).max() < 0.5


def test_add_take_rebuilds_the_header_counts_and_history(tmp_path: Path, line) -> None:
    path, _ = line
    out = tmp_path / "new"
    assert main(["skate", "add-take", CLIP, str(path), "-o", str(out)]) == 0
    before, after = _all_takes(DEMO_ROOT), _all_takes(out)
    assert set(after) - set(before) == {(CLIP, 3)}
    assert all(after[k] == before[k] for k in before)
    with SkateInstall.open(out) as inst:
        bank = inst.bank()
        h = bank.clip(CLIP).header
        assert (h.take_count, h.history_len, h.sth_row_offsets) == (4, 4, (0, 12, 24, 36))
        assert bank.problems == []


def test_an_existing_output_root_or_unknown_clip_is_refused(tmp_path: Path, line, capsys) -> None:
    path, _ = line
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep")
    assert main(["skate", "add-take", CLIP, str(path), "-o", str(tmp_path / "full")]) == 2
    assert main(["skate", "replace", CLIP + "x", "0", str(path), "-o", str(tmp_path / "n")]) == 2
    assert main(["skate", "replace", CLIP, "9", str(path), "-o", str(tmp_path / "n")]) == 2
    err = capsys.readouterr().err
    assert "did you mean" in err and "no take 9" in err and not (tmp_path / "n").exists()
