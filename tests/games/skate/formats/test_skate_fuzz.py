"""Fuzz every container parser: truncated or bit-flipped valid files raise only FormatError."""

from __future__ import annotations

import os

import pytest
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skate_fakes import small_bank

from audio.containers import refpack
from audio.core.errors import FormatError
from audio.games.skate.formats.big import (
    BigArchive,
    chunkref_decode,
    chunkref_encode,
    write_big,
    write_legacy_big,
)
from audio.games.skate.formats.evt import parse_evt, write_evt
from audio.games.skate.formats.hdr import ClipHeader, parse_hdr, write_hdr
from audio.games.skate.formats.install import SkateInstall, write_install
from audio.games.skate.formats.sth import parse_sth, write_sth

FUZZ = settings(max_examples=examples(120), suppress_health_check=[HealthCheck.function_scoped_fixture])
_CLIPS, _EVT, _ = small_bank()
_PAYLOAD = b"speech " * 40 + os.urandom(64)


def mutations(data: bytes):
    """A valid file truncated at a random length and/or with random bytes xor-ed."""
    n = len(data)
    return st.tuples(
        st.integers(0, n), st.lists(st.tuples(st.integers(0, max(n - 1, 0)), st.integers(1, 255)), max_size=6)
    )


def mutate(data: bytes, m) -> bytes:
    cut, flips = m
    out = bytearray(data)
    for pos, x in flips:
        if pos < len(out):
            out[pos] ^= x
    return bytes(out[:cut])


def check(parse) -> None:
    """Run ``parse`` on mutated input: it returns, or raises a FormatError that names the
    file and says what was expected (any other exception fails the test)."""
    try:
        parse()
    except FormatError as exc:
        assert exc.path and exc.expected
        assert exc.offset is None or exc.offset >= 0


def exercise(data: bytes) -> None:
    """Parse an archive and read every entry and nested archive."""
    arc = BigArchive.from_buffer(data, "fuzz.big")
    for e in arc.entries:
        arc.read(e)
        if e.name.endswith(".big"):
            exercise_nested(arc.open_nested(e))


def exercise_nested(arc: BigArchive) -> None:
    for e in arc.entries:
        arc.read(e)


SAMPLES = {
    "refpack": refpack.encode(_PAYLOAD * 3),
    "chunkref": chunkref_encode(_PAYLOAD * 30, 2, chunk_size=4096, alignment=32),
    "chunkref-zlib": chunkref_encode(_PAYLOAD * 30, 3, chunk_size=4096),
    "eb3": write_big(
        [
            ("a.dat", _PAYLOAD),
            ("d/b.dat", _PAYLOAD[:50], "refpack"),
            ("c.dat", _PAYLOAD, "chunkref-zlib"),
            ("n.big", write_big([("x", b"xyz" * 9)])),
        ]
    ),
    "eb3-wide": write_big([("a", _PAYLOAD, "chunkref-refpack")], wide_entries=True, alignment_shift=7),
    "bigf": write_legacy_big([("a\\b.dat", _PAYLOAD, "refpack"), ("c", b"cc")]),
    "big4": write_legacy_big([("a", _PAYLOAD)], magic=b"BIG4"),
    "evt": write_evt(_EVT),
    "hdr": write_hdr(ClipHeader.new(5, 4)),
    "sth": write_sth([(0, bytes(8)), (100, bytes(8)), (300, bytes(8))]),
}


@FUZZ
@given(mutations(SAMPLES["refpack"]))
def test_fuzz_refpack(m):
    check(lambda: refpack.decode(mutate(SAMPLES["refpack"], m), "fuzz"))


@pytest.mark.parametrize("kind", ["chunkref", "chunkref-zlib"])
@FUZZ
@given(m=st.data())
def test_fuzz_chunkref(kind, m):
    data = SAMPLES[kind]
    check(lambda: chunkref_decode(mutate(data, m.draw(mutations(data))), "fuzz"))


@pytest.mark.parametrize("kind", ["eb3", "eb3-wide", "bigf", "big4"])
@FUZZ
@given(m=st.data())
def test_fuzz_archives(kind, m):
    data = SAMPLES[kind]
    check(lambda: exercise(mutate(data, m.draw(mutations(data)))))


@FUZZ
@given(mutations(SAMPLES["evt"]))
def test_fuzz_evt(m):
    check(lambda: parse_evt(mutate(SAMPLES["evt"], m), "fuzz.evt"))


@FUZZ
@given(mutations(SAMPLES["hdr"]), mutations(SAMPLES["sth"]), st.integers(0, 1000))
def test_fuzz_hdr_and_sth(mh, ms, dat_size):
    check(lambda: parse_hdr(mutate(SAMPLES["hdr"], mh), "fuzz.hdr"))
    check(lambda: parse_sth(mutate(SAMPLES["sth"], ms), dat_size, "fuzz.sth"))


@pytest.fixture(scope="module")
def install_bytes(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzzinst")
    path = write_install(root, "livingworld", _CLIPS[:3], _EVT, compression="refpack")
    return path.read_bytes()


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.data())
def test_fuzz_install_index(install_bytes, tmp_path_factory, m):
    root = tmp_path_factory.mktemp("inst")
    folder = root / "data" / "audio" / "english"
    folder.mkdir(parents=True)
    (folder / "livingworldspeech.big").write_bytes(mutate(install_bytes, m.draw(mutations(install_bytes))))

    def index() -> None:
        with SkateInstall.open(root) as inst:
            bank = inst.bank()
            for c in bank.clips:
                for t in c.takes:
                    bank.take_bytes(c, t.index)
            bank.events
            bank.voice_bits(59)

    check(index)
