"""Audio containers: where the games' coded samples sit in a file (vgmstream's ``meta/``).

A container parses headers, walks blocks and finds each stream's coded bytes, then hands
them to a sample codec of :mod:`audio.codecs` (containers import codecs, never the
reverse). Every format has a reader and a writer; every parser raises
:class:`~audio.core.errors.FormatError` (file + offset) on bad input and
:class:`~audio.core.errors.UnsupportedError` for well-formed input it does not implement.

EA takes (SNR header + SNS blocks; Skate 3)
    ``SnrHeader``, ``parse_snr``, ``decode_take``, ``EA_CODECS`` (snr: the table from SNR codec id
    to decoder, float32 out); ``split_sps``, ``write_sps`` (snr, SPS v1);
    ``SnsBlock``, ``walk_blocks``, ``coded_blocks``, ``write_blocks`` (sns)

Sony ``VAGp`` clips
    ``VagFile``, ``read_vag``, ``write_vag``, ``decode_vag``, ``encode_vag`` (vag)

XACT wave banks (Sylpheed)
    ``WaveBank``, ``WaveEntry``, ``NewWave``, ``read_wavebank``, ``decode_entry``, ``entry_data``,
    ``write_wavebank`` (xwb)

RIFF/WAVE
    ``RiffWave``, ``read_riff``, ``decode_riff``, ``build_wav``, ``xma2_fmt``, ``msadpcm_fmt``,
    ``pcm_fmt`` (riff)

Any audio file
    ``decode_file`` (fallback: soundfile, then our containers by signature, then vgmstream)

Reference decoder
    ``vgmstream_available``, ``decode_take_vgmstream`` (vgmstream adapter over pyvgmstream)

Cache
    ``TakeCache``, ``CacheStats`` (cache: decoded takes, bounded in megabytes)

Compression
    :mod:`audio.containers.refpack` (EA RefPack, the byte compression of BIG and HOG archive
    members: bytes to bytes, so neither a sample codec nor an audio container; it sits here
    because only archive containers use it)
"""

from __future__ import annotations

from audio.containers.cache import CacheStats, TakeCache
from audio.containers.fallback import decode_file
from audio.containers.riff import RiffWave, build_wav, decode_riff, msadpcm_fmt, pcm_fmt, read_riff, xma2_fmt
from audio.containers.snr import EA_CODECS, SnrHeader, decode_take, parse_snr, split_sps, write_sps
from audio.containers.sns import SnsBlock, coded_blocks, walk_blocks, write_blocks
from audio.containers.vag import VagFile, decode_vag, encode_vag, read_vag, write_vag
from audio.containers.vgmstream import available as vgmstream_available
from audio.containers.vgmstream import decode_take_vgmstream
from audio.containers.xwb import (
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
    "EA_CODECS",
    "split_sps",
    "write_sps",
    "SnsBlock",
    "walk_blocks",
    "coded_blocks",
    "write_blocks",
    # VAG
    "VagFile",
    "read_vag",
    "write_vag",
    "decode_vag",
    "encode_vag",
    # any audio file
    "decode_file",
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
