"""vgmstream never takes the host down: a ``VAG``-magic file its VAG reader cannot take is refused
before it in one line (vgmstream spent 1.6-3 s of CPU on a 4-byte ``.vag``), and every file it
does see is decoded in a child process with a CPU budget and an address-space limit, so a file
past them costs that request (a play's fault), not the process that asked."""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.containers import vgmstream
from audio.containers.fallback import decode_file
from audio.containers.vag import encode_vag
from audio.core.errors import FormatError

needs_vgmstream = pytest.mark.skipif(not vgmstream.available()[0], reason="pyvgmstream unavailable")

_TONE = (0.4 * np.sin(2 * np.pi * 330 * np.arange(4410) / 22050)).astype(np.float32)
_VAG = encode_vag(_TONE, 22050, "line")  # a file vgmstream decodes (and so does our reader)


def _size_at_0c(data: bytes, size: int, big: bool = True) -> bytes:
    return data[:0x0C] + struct.pack(">I" if big else "<I", size) + data[0x10:]


def test_a_4_byte_vag_is_refused_before_vgmstream_in_one_line(tmp_path: Path, monkeypatch) -> None:
    def never(path: str) -> None:
        raise AssertionError(f"vgmstream was asked to decode {path}")

    monkeypatch.setattr(vgmstream, "decode_path", never)
    p = tmp_path / "short.vag"
    p.write_bytes(b"VAGp")
    cpu = time.process_time()
    with pytest.raises(FormatError) as info:
        decode_file(p)
    assert time.process_time() - cpu < 0.5  # vgmstream alone spent 1.6-3 s on this file
    msg = str(info.value)
    assert "\n" not in msg
    assert "vgmstream: not tried: expected a VAG header of 48 bytes; the file has 4" in msg


def test_the_refusal_follows_vgmstreams_header_and_size_checks() -> None:
    # the header: samples start at 0x30 in every variant
    assert vgmstream.vag_refusal(_VAG[:47]) == "a VAG header of 48 bytes; the file has 47"
    assert vgmstream.vag_refusal(_size_at_0c(_VAG[:48], 0)) is None
    # the data size: at most the file size per channel (64 channels at most), either byte order
    n = len(_VAG)
    assert vgmstream.vag_refusal(_size_at_0c(_VAG, n + 64)) is None
    assert "0x0C" in str(vgmstream.vag_refusal(_size_at_0c(_VAG, n + 65)))
    assert vgmstream.vag_refusal(_size_at_0c(_VAG, 16, big=False)) is None  # 0x10000000 big-endian
    assert vgmstream.vag_refusal(b"pGAV" + _size_at_0c(_VAG, 0x7FFFFFFF, big=False)[4:]) is not None
    assert vgmstream.vag_refusal(b"pGAV" + _size_at_0c(_VAG, n - 48, big=False)[4:]) is None
    # the magic vgmstream's VAG reader claims: "VAG" big-endian or little-endian ("xGAV")
    assert vgmstream.vag_refusal(b"VAGi") is not None and vgmstream.vag_refusal(b"qGAV") is not None
    assert vgmstream.vag_refusal(b"RIFF") is None and vgmstream.vag_refusal(b"") is None


@settings(max_examples=examples(300), deadline=None)
@given(
    magic=st.sampled_from([b"VAGp", b"VAGi", b"VAG1", b"VAG2", b"pGAV", b"VAG\0"]),
    body=st.binary(max_size=200),
    size=st.integers(0, 0xFFFFFFFF),
    big=st.booleans(),
)
def test_fuzz_the_refusal_is_one_line_and_spares_every_file_whose_size_fits(
    magic: bytes, body: bytes, size: int, big: bool
) -> None:
    data = magic + body
    if len(data) >= 0x10:
        data = _size_at_0c(data, size, big)
    why = vgmstream.vag_refusal(data)
    if len(data) < 0x30:
        assert why == f"a VAG header of 48 bytes; the file has {len(data)}"
    elif size <= len(data) + 64:
        assert why is None
    else:  # refused unless the other byte order's reading fits
        assert why is None or ("\n" not in why and "0x0C" in why)


@needs_vgmstream
@pytest.mark.slow  # vgmstream spends up to the budget on the files the refusal would have saved
@settings(max_examples=examples(25), deadline=None)
@given(magic=st.sampled_from([b"VAGp", b"pGAV"]), body=st.binary(max_size=120))
def test_fuzz_a_refused_file_is_one_vgmstream_cannot_decode(
    tmp_path_factory, magic: bytes, body: bytes
) -> None:
    data = magic + body
    if vgmstream.vag_refusal(data) is None:
        return
    p = tmp_path_factory.mktemp("refused") / "f.vag"
    p.write_bytes(data)
    with pytest.raises(FormatError):
        vgmstream.decode_path(str(p))


@needs_vgmstream
def test_a_file_past_the_cpu_budget_costs_its_request_and_the_next_file_decodes(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(vgmstream, "CPU_SECONDS", 0.2)
    bad, good = tmp_path / "short.vag", tmp_path / "line.vag"
    bad.write_bytes(b"VAGp")  # not refused here (decode_path has no pre-check): the 1.6 s scan
    good.write_bytes(_VAG)
    cpu = time.process_time()
    with pytest.raises(FormatError, match="stopped after its CPU budget of 0.2 s"):
        vgmstream.decode_path(str(bad))
    assert time.process_time() - cpu < 0.5  # the child spent it, not this process
    pcm, sample_rate = vgmstream.decode_path(str(good))
    assert sample_rate == 22050 and pcm.shape == (28 + -(-_TONE.size // 28) * 28, 1)


@needs_vgmstream
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_file_that_blocks_vgmstream_without_cpu_is_stopped_at_the_wall_limit(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(vgmstream, "WALL_SECONDS", 0.5)
    fifo = tmp_path / "pipe.vag"
    os.mkfifo(fifo)  # opening it waits for a writer forever
    with pytest.raises(FormatError, match=r"stopped after 0\.5 s"):
        vgmstream.decode_path(str(fifo))


@needs_vgmstream
def test_the_child_runs_with_the_address_space_limit_and_is_kept_for_the_next_file(tmp_path: Path) -> None:
    p = tmp_path / "line.vag"
    p.write_bytes(_VAG)
    vgmstream.decode_path(str(p))
    (child,) = vgmstream._idle[-1:]
    limits = Path(f"/proc/{child.proc.pid}/limits").read_text()
    row = next(line for line in limits.splitlines() if line.startswith("Max address space"))
    assert row.split()[3:5] == [str(vgmstream.MEMORY_BYTES)] * 2
    vgmstream.decode_path(str(p))
    assert child in vgmstream._idle  # the same process answered again


@needs_vgmstream
def test_a_child_that_died_while_idle_is_replaced(tmp_path: Path) -> None:
    p = tmp_path / "line.vag"
    p.write_bytes(_VAG)
    vgmstream.decode_path(str(p))
    child = vgmstream._idle[-1]
    child.proc.kill()
    child.proc.wait()
    pcm, _ = vgmstream.decode_path(str(p))
    assert pcm.size and child not in vgmstream._idle


@needs_vgmstream
def test_a_play_of_a_file_past_the_budget_is_one_fault_and_the_render_goes_on(
    tmp_path: Path, monkeypatch
) -> None:
    from audio.offline.render import render_scenario

    monkeypatch.setattr(vgmstream, "CPU_SECONDS", 0.2)
    monkeypatch.setattr(vgmstream, "vag_refusal", lambda data: None)  # as if it passed the pre-check
    (tmp_path / "bad.vag").write_bytes(b"VAGp")
    (tmp_path / "line.vag").write_bytes(_VAG)
    (tmp_path / "s.toml").write_text(
        '[scenario]\nname = "budget"\nduration = 1.0\n\n[listener]\nposition = [0.0, 1.7, 0.0]\n\n'
        '[[emitter]]\nid = "e"\nposition = [0.0, 1.7, 2.0]\n\n'
        '[[event]]\nt = 0.1\ntype = "play"\nemitter = "e"\nfile = "bad.vag"\n\n'
        '[[event]]\nt = 0.2\ntype = "play"\nemitter = "e"\nfile = "line.vag"\n'
    )
    res = render_scenario(tmp_path / "s.toml")
    faults = [d for d in res.decisions if d.outcome == "Fault"]
    assert res.faults == 1 and faults[0].detail["kind"] == "decode"
    assert "CPU budget of 0.2 s" in faults[0].detail["reason"]
    assert any(d.system == "play" and d.outcome == "Started" for d in res.decisions)
