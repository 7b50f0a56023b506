"""Codecs and audio containers: the games' banks decoded to numpy arrays.

Containers and codecs stay apart (one codec serves many containers). Every format has
a reader and a writer; every parser raises :class:`~audio.core.errors.FormatError`
(file + offset) on bad input and :class:`~audio.core.errors.UnsupportedError` for
well-formed input it does not implement.

EA takes (SNR header + SNS blocks; Skate 3)
    ``SnrHeader``, ``parse_snr``, ``decode_take`` (snr); ``split_sps``, ``write_sps`` (snr, SPS v1);
    ``SnsBlock``, ``walk_blocks``, ``write_blocks`` (sns)

EA codecs
    ``decode_pcm16be``, ``encode_pcm16be`` (pcm, codec 2);
    ``decode_xas1``, ``encode_xas1``, ``decode_frames``, ``encode_frames`` (xas1, codec 4);
    ``decode_eaxma``, ``encode_eaxma`` (eaxma, codec 3)

Sony PS-ADPCM (SPU/SPU2 "VAG" ADPCM)
    ``decode_psadpcm``, ``encode_psadpcm``, ``PsxSettings`` (psadpcm);
    ``VagFile``, ``read_vag``, ``write_vag``, ``decode_vag``, ``encode_vag`` (vag, Sony ``VAGp``)

Any audio file
    ``decode_file`` (fallback: soundfile, then our codecs by signature, then vgmstream)

XMA through FFmpeg
    ``decode_xma``, ``xma2_extradata``, ``xma1_extradata``, ``XmaPacketHeader``,
    ``parse_xma2_packet_header``, ``split_packets`` (xma)

XACT wave banks (Sylpheed)
    ``WaveBank``, ``WaveEntry``, ``NewWave``, ``read_wavebank``, ``decode_entry``, ``entry_data``,
    ``write_wavebank`` (xwb)

RIFF/WAVE
    ``RiffWave``, ``read_riff``, ``decode_riff``, ``build_wav``, ``xma2_fmt``, ``msadpcm_fmt``,
    ``pcm_fmt`` (riff)

Reference decoder
    ``vgmstream_available``, ``decode_take_vgmstream`` (vgmstream adapter over pyvgmstream)

Cache
    ``TakeCache``, ``CacheStats`` (cache)
"""

from __future__ import annotations

from audio.codecs.cache import CacheStats, TakeCache
from audio.codecs.eaxma import decode_eaxma, encode_eaxma
from audio.codecs.fallback import decode_file
from audio.codecs.pcm import decode_pcm16be, encode_pcm16be
from audio.codecs.psadpcm import PsxSettings, decode_psadpcm, encode_psadpcm
from audio.codecs.riff import RiffWave, build_wav, decode_riff, msadpcm_fmt, pcm_fmt, read_riff, xma2_fmt
from audio.codecs.snr import SnrHeader, decode_take, parse_snr, split_sps, write_sps
from audio.codecs.sns import SnsBlock, walk_blocks, write_blocks
from audio.codecs.vag import VagFile, decode_vag, encode_vag, read_vag, write_vag
from audio.codecs.vgmstream import available as vgmstream_available
from audio.codecs.vgmstream import decode_take_vgmstream
from audio.codecs.xas1 import decode_frames, decode_xas1, encode_frames, encode_xas1
from audio.codecs.xma import (
    XmaPacketHeader,
    decode_xma,
    parse_xma2_packet_header,
    split_packets,
    xma1_extradata,
    xma2_extradata,
)
from audio.codecs.xwb import (
    NewWave,
    WaveBank,
    WaveEntry,
    decode_entry,
    entry_data,
    read_wavebank,
    write_wavebank,
)

__all__ = [
    # EA takes
    "SnrHeader",
    "parse_snr",
    "decode_take",
    "split_sps",
    "write_sps",
    "SnsBlock",
    "walk_blocks",
    "write_blocks",
    # EA codecs
    "decode_pcm16be",
    "encode_pcm16be",
    "decode_xas1",
    "encode_xas1",
    "decode_frames",
    "encode_frames",
    "decode_eaxma",
    "encode_eaxma",
    # PS-ADPCM
    "decode_psadpcm",
    "encode_psadpcm",
    "PsxSettings",
    "VagFile",
    "read_vag",
    "write_vag",
    "decode_vag",
    "encode_vag",
    # any audio file
    "decode_file",
    # XMA
    "decode_xma",
    "xma2_extradata",
    "xma1_extradata",
    "XmaPacketHeader",
    "parse_xma2_packet_header",
    "split_packets",
    # XACT wave banks
    "WaveBank",
    "WaveEntry",
    "NewWave",
    "read_wavebank",
    "decode_entry",
    "entry_data",
    "write_wavebank",
    # RIFF
    "RiffWave",
    "read_riff",
    "decode_riff",
    "build_wav",
    "xma2_fmt",
    "msadpcm_fmt",
    "pcm_fmt",
    # reference decoder
    "vgmstream_available",
    "decode_take_vgmstream",
    # cache
    "TakeCache",
    "CacheStats",
]
