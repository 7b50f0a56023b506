"""Renders in one process share what does not depend on the seed (installs, tuning, graphs,
decoded takes: :mod:`audio.core.memo`), keyed by the files they came from: a second render is
byte for byte the first, and a file changed between two renders is read again."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from audio.core import memo
from audio.games.skate.formats.install import SpeechBank
from audio.offline.render import Outputs, render_scenario
from audio.offline.scenario import demo_scenario


def _render(scenario: Path, out: Path) -> bytes:
    render_scenario(scenario, outputs=Outputs(audio=out))
    return out.read_bytes()


@pytest.mark.parametrize("demo", ["skate", "sylpheed", "starlancer", "radiata"])
def test_a_second_render_in_the_process_gives_the_same_bytes_from_what_the_first_kept(demo, tmp_path):
    memo.clear()
    first = _render(demo_scenario(demo), tmp_path / "first.wav")
    hits = memo.stats()["hits"]
    second = _render(demo_scenario(demo), tmp_path / "second.wav")
    assert memo.stats()["hits"] > hits  # the second render really read what the first kept
    memo.clear()
    assert second == first


def _plaza_copy(tmp_path: Path) -> Path:
    """The Skate demo (scenario, install and tuning) in a folder of its own, its tuning named."""
    demo = demo_scenario("skate").parent
    folder = tmp_path / "plaza"
    shutil.copytree(demo, folder)
    scn = folder / "plaza.toml"
    text = scn.read_text(encoding="utf-8")
    assert '# tuning = "tuning.toml"' in text
    scn.write_text(text.replace('# tuning = "tuning.toml"', 'tuning = "tuning.toml"'), encoding="utf-8")
    return scn


def test_a_render_decodes_no_take_the_previous_one_decoded_until_the_bank_file_changes(tmp_path, monkeypatch):
    scn = _plaza_copy(tmp_path)
    decoded: list[str] = []
    real = SpeechBank.decode_take

    def counting(self, clip, take):  # type: ignore[no-untyped-def]
        decoded.append(str(clip.name if hasattr(clip, "name") else clip))
        return real(self, clip, take)

    monkeypatch.setattr(SpeechBank, "decode_take", counting)
    memo.clear()
    first = _render(scn, tmp_path / "a.wav")
    n_first = len(decoded)
    assert n_first > 0
    second = _render(scn, tmp_path / "b.wav")
    assert len(decoded) == n_first  # every take came from the first render
    big = next((tmp_path / "plaza").rglob("livingworldspeech.big"))
    st = big.stat()
    os.utime(big, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # the bank "changed"
    third = _render(scn, tmp_path / "c.wav")
    memo.clear()
    assert len(decoded) == 2 * n_first  # read again: the same takes decoded once more
    assert first == second == third


def test_a_tuning_file_edited_between_two_renders_is_read_again(tmp_path):
    scn = _plaza_copy(tmp_path)
    memo.clear()
    before = render_scenario(scn, outputs=Outputs(audio=tmp_path / "before.wav"))
    tuning = scn.parent / "tuning.toml"
    text = tuning.read_text(encoding="utf-8")
    edited_text = re.sub(r"(?m)^probability = [0-9.]+$", "probability = 0.0", text)
    assert edited_text != text
    tuning.write_text(edited_text, encoding="utf-8")
    st = tuning.stat()
    os.utime(tuning, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a new signature
    edited = render_scenario(scn, outputs=Outputs(audio=tmp_path / "edited.wav"))
    memo.clear()
    cold = render_scenario(scn, outputs=Outputs(audio=tmp_path / "cold.wav"))
    memo.clear()
    started = ("skate.speech", "Started")
    assert edited.outcome_counts()[started] < before.outcome_counts()[started]  # the 0 % was read
    assert edited.outcome_counts() == cold.outcome_counts()
    assert (tmp_path / "edited.wav").read_bytes() == (tmp_path / "cold.wav").read_bytes()


def test_a_take_that_does_not_decode_costs_one_voice_in_every_render_not_only_the_first(
    tmp_path, monkeypatch
):
    from audio.core.errors import FormatError

    scn = _plaza_copy(tmp_path)
    real = SpeechBank.decode_take
    bad: list[str] = []

    def failing(self, clip, take):  # type: ignore[no-untyped-def]
        if not bad:
            bad.append(clip.name)  # the first take a render decodes is bad, every time it is asked
        if clip.name == bad[0]:
            raise FormatError(self.path, 0, "a decodable take", "a corrupt block (test)")
        return real(self, clip, take)

    monkeypatch.setattr(SpeechBank, "decode_take", failing)
    memo.clear()
    runs = [render_scenario(scn, outputs=Outputs(audio=tmp_path / f"{i}.wav")) for i in range(2)]
    memo.clear()
    faults = [r.outcome_counts()[("skate.speech", "Fault")] for r in runs]
    assert faults[0] >= 1 and faults[1] == faults[0]  # a failed decode is not kept as a success
    assert (tmp_path / "0.wav").read_bytes() == (tmp_path / "1.wav").read_bytes()
