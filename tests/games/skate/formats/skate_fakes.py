"""Small Skate 3 speech banks for the format tests (real PCM16BE takes, so they decode)."""

from __future__ import annotations

import numpy as np

from audio.codecs.pcm import encode_pcm16be
from audio.containers.snr import CODEC_PCM16BE, TYPE_STREAM, SnrHeader
from audio.containers.sns import write_blocks
from audio.games.skate.formats.evt import ClipRef, EvtEvent, EvtRecord, EvtTable, event_id
from audio.games.skate.formats.hdr import ClipHeader

SAMPLE_RATE = 36000


def pcm_take(seed: int, n: int = 900, sample_rate: int = SAMPLE_RATE) -> tuple[bytes, bytes, np.ndarray]:
    """(8-byte SNR header, SNS body, the int16 samples) of a mono PCM16BE take."""
    rng = np.random.default_rng(seed)
    pcm = (rng.standard_normal(n) * 3000).astype(np.int16)
    snr = SnrHeader(0, CODEC_PCM16BE, 1, sample_rate, TYPE_STREAM, False, n).pack()
    return snr, write_blocks(encode_pcm16be(pcm, block_samples=256)), pcm


def event(
    n: int,
    name: str,
    records: list[tuple[tuple[int, ...], tuple[int, ...]]],
    fields: tuple[int, ...] = (1, 2),
    **kw,
) -> EvtEvent:
    """A living-world event ``n`` whose records are (values, clip ids)."""
    recs = tuple(
        EvtRecord(0x39, 100, 0, 0, vals, tuple(ClipRef(c) for c in clips)) for vals, clips in records
    )
    base = dict(
        id=event_id(1, n),
        timeout=90,
        priority=520,
        flags=len(fields) << 4,
        probability=100,
        flags2=0,
        byte11=0,
        fields=fields,
        records=recs,
        name=name,
    )
    base.update(kw)
    return EvtEvent(**base)


def small_bank():
    """Five clips of three voices, two events; returns (clips, evt, samples by (clip, take))."""
    spec = [  # name, hdr id, takes
        ("501_59_busm1_Warn_n", 10, 3),
        ("501_59_busm1_Warn_f", 11, 2),
        ("501_47_adtf2_Warn_n", 12, 1),
        ("497_59_busm1_Silence", 13, 1),
        ("1901_53_Shout", 14, 2),
    ]
    clips, samples = [], {}
    for k, (name, hid, n) in enumerate(spec):
        takes = []
        for t in range(n):
            snr, sns, pcm = pcm_take(100 * k + t, n=300 + 50 * t)
            takes.append((snr, sns))
            samples[(name, t)] = pcm
        clips.append((name, ClipHeader.new(hid, n), takes))
    evt = EvtTable(
        bank=1,
        sub_bank=0,
        events=[
            event(
                0x12,
                "501_warn",
                [((0x1000, 1), (10,)), ((0x1000, 1), (11,)), ((0x2, 2), (12,)), ((0x4, 8), (99,))],
            ),  # 99: a reference to a missing clip
            event(0x30, "497_silence", [((0x40, 4), (13,)), ((0x40, 4), (13,))]),
            event(0x06, "1901_shout", [((0x100, 1), (14, 14))]),
        ],
    )
    return clips, evt, samples
