"""Radiata's voice clips as Sony ``.vag`` (``VAGp``, mono PS-ADPCM): the reader and writer.

The container is generic (Sony SDK), so its code is :mod:`audio.codecs.vag`, where the
runtime fallback decoder finds it without importing a game; this module is its name in
Radiata's formats (``read_vag``, ``write_vag``, ``decode_vag``, ``encode_vag``, ``VagFile``).
"""

from __future__ import annotations

from audio.codecs.vag import (
    HEADER_SIZE,
    MAGIC,
    MAX_RATE,
    VERSION,
    VagFile,
    decode_vag,
    encode_vag,
    read_vag,
    write_vag,
)

__all__ = [
    "HEADER_SIZE",
    "MAGIC",
    "MAX_RATE",
    "VERSION",
    "VagFile",
    "decode_vag",
    "encode_vag",
    "read_vag",
    "write_vag",
]
