"""The echo send's hand-over through the submix's lane box (:func:`audio.dsp.kernels.box_in16`):
a full voice group sending to 16 submix instances in order fills a block of the box instead of
the rows, and the submix reads it as its group's lanes. Every render here is compared bit for
bit with the node path (which sends through the rows), the oracle."""

from __future__ import annotations

import numpy as np
import pytest

from audio.core.engine import Engine
from audio.dsp import fused as F
from audio.dsp.mixer import Mixer

SRC = (0.2 * np.random.default_rng(5).standard_normal(36_000)).astype(np.float32)


def _render(fused: str, slots: list[int], monkeypatch, changes: bool = True) -> tuple[np.ndarray, float]:
    """The master of ``len(slots)`` Skate stream voices on those submix slots (with an echo
    level ramp, a stop and a delay change midway when ``changes``), and the largest sample
    left in the submix's lane box (0 when no group handed its send over)."""
    monkeypatch.setenv("BARKBUS_FUSED", fused)
    e = Engine(block=256, voice_budget=48, voice_headroom=0, submix_slots=48, start_silence=0)
    voices = []
    for i, slot in enumerate(slots):
        p = {"Sen0_echo.level": 0.2 + 0.01 * i, "Pn21.angle_deg": 7.0 * i, "HI20.cutoff_hz": 90.0}
        voices.append(e.voices.start("skate_stream_voice", SRC, 36_000, slot=slot, params=p))
        e.mixer.set_submix("skate_echo_submix", slot, **{"Del0.seconds": 0.006 + 0.001 * (i % 5)})
    blocks = []
    for b in range(40):
        if changes and b == 12:
            e.voices.set(voices[3], **{"Sen0_echo.level": 0.5})  # one group ramps: its rows path
            e.mixer.set_submix("skate_echo_submix", slots[20 % len(slots)], **{"Del0.seconds": 0.002})
        if changes and b == 25:
            e.voices.stop(voices[-1])
        blocks.append(e.render(256))
    sub0 = e.mixer.submix_banks["skate_echo_submix"].nodes[0]
    return np.concatenate(blocks), float(np.abs(sub0.box).max()) if sub0.box.size else 0.0


@pytest.mark.parametrize(
    ("slots", "boxed"),
    [
        (list(range(40)), True),  # two full aligned groups and a group of 8
        (list(range(1, 33)), False),  # full groups, but one instance off the box's blocks
        ([*range(16), 3], False),  # a 17th voice sends into the first block too: the rows
        ([*range(15, -1, -1), *range(16, 32)], True),  # the first group reversed: its rows
    ],
)
def test_echo_sends_through_the_lane_box_mix_as_the_node_paths_rows(monkeypatch, slots, boxed):
    ref, _ = _render("0", slots, monkeypatch)
    out, left = _render("1", slots, monkeypatch)
    assert np.abs(ref).max() > 0.01
    assert np.array_equal(out.view(np.int32), ref.view(np.int32))
    assert (left > 0) == boxed


def test_a_box_block_of_a_group_the_submix_reads_from_rows_goes_to_those_rows_first():
    ln = F.lanes_module()
    rng = np.random.default_rng(3)
    n = 100
    inp = np.zeros((48, 1, 256), np.float32)
    inp[5, 0, :n] = 9.0  # never read: instance 5 is not in the group
    box = rng.standard_normal((3, 256, 16)).astype(np.float32)
    boxed = np.array([False, True, False])
    act = np.arange(17, 33, dtype=np.int64)  # 16 instances across blocks 1 and 2
    lanes = np.full((1, 256, 16), np.nan, np.float32)
    want = np.zeros((48, 256), np.float32)
    want[16:32, :n] = box[1, :n].T
    ln.inputs_to_lanes(act, 0, 16, inp, lanes, n, box, boxed)
    assert not boxed.any()
    assert np.array_equal(lanes[0, :n], want[17:33, :n].T)
    assert not inp[17:33, 0, :n].any()  # read and cleared
    assert inp[16, 0, :n].tolist() == box[1, :n, 0].tolist()  # spilled, left for its reader


def test_a_submix_with_two_sending_graphs_gets_no_box(tmp_path):
    other = tmp_path / "other_voice.toml"
    other.write_text(
        '[graph]\nname = "other_voice"\nkind = "voice"\n'
        '[[node]]\nid = "Rsp0"\nkind = "Rsp0"\n'
        '[[node]]\nid = "Sen0"\nkind = "Sen0"\nto = "submix:skate_echo_submix"\n'
    )
    m = Mixer(max_block=256, voice_capacity=32, submix_slots=32, fused=True)
    send = m.voice_bank("skate_stream_voice").by_id["Sen0_echo"]
    sub0 = m.submix("skate_echo_submix").nodes[0]
    assert send.boxed is sub0.boxed  # the only sender
    m.voice_bank(str(other))
    assert send.boxed.shape[0] == 0 and m.voice_bank(str(other)).by_id["Sen0"].boxed.shape[0] == 0
