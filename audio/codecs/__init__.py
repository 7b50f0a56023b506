"""Sample codecs: coded bytes to samples, and back (vgmstream's ``coding/``).

A codec knows how samples are coded, not where they are stored: the containers in
:mod:`audio.containers` find the coded data in a file and hand it to a codec here. Codecs
never import containers. Every decoder raises :class:`~audio.core.errors.FormatError`
(file + offset) on bad input and :class:`~audio.core.errors.UnsupportedError` for
well-formed input it does not implement.

EA codecs (fed :class:`~audio.codecs.blocks.CodedBlock` lists by the SNS/SPS container)
    ``decode_pcm16be``, ``encode_pcm16be`` (pcm, codec 2);
    ``decode_xas1``, ``encode_xas1``, ``decode_xas1_frames``, ``encode_xas1_frames`` (xas1, codec 4);
    ``decode_eaxma``, ``encode_eaxma`` (eaxma, codec 3)

Sony PS-ADPCM (SPU/SPU2 "VAG" ADPCM)
    ``decode_psadpcm``, ``encode_psadpcm``, ``PsxSettings`` (psadpcm)

XMA through FFmpeg
    ``decode_xma``, ``xma2_extradata``, ``xma1_extradata``, ``XmaPacketHeader``,
    ``parse_xma2_packet_header``, ``split_packets`` (xma)

Digital Anvil LPC (Starlancer speech)
    :mod:`audio.codecs.da_lpc` (``decode``, ``encode``)
"""

from __future__ import annotations

from audio.codecs.blocks import CodedBlock, pcm16_to_float32
from audio.codecs.eaxma import decode_eaxma, encode_eaxma
from audio.codecs.pcm import decode_pcm16be, encode_pcm16be
from audio.codecs.psadpcm import PsxSettings, decode_psadpcm, encode_psadpcm
from audio.codecs.xas1 import decode_xas1, decode_xas1_frames, encode_xas1, encode_xas1_frames
from audio.codecs.xma import (
    XmaPacketHeader,
    decode_xma,
    parse_xma2_packet_header,
    split_packets,
    xma1_extradata,
    xma2_extradata,
)

__all__ = [
    "CodedBlock",
    "pcm16_to_float32",
    # EA codecs
    "decode_pcm16be",
    "encode_pcm16be",
    "decode_xas1",
    "encode_xas1",
    "decode_xas1_frames",
    "encode_xas1_frames",
    "decode_eaxma",
    "encode_eaxma",
    # PS-ADPCM
    "decode_psadpcm",
    "encode_psadpcm",
    "PsxSettings",
    # XMA
    "decode_xma",
    "xma2_extradata",
    "xma1_extradata",
    "XmaPacketHeader",
    "parse_xma2_packet_header",
    "split_packets",
]
