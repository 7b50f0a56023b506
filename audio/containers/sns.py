"""EA SNS block layout (EAAudioCore): walking and writing the blocks of a take.

Each block: BE u32 ``(flag << 24) | size`` (size counts the 8-byte block header), BE u32
samples in the block, then the codec payload. Version 0 (SNR/SNS) flags: 0x00 data,
0x80 last block (the end marker is optional). Version 1 (SPS) ids: 0x48 'H' header
block, 0x44 'D' data, 0x45 'E' end. Size 0 or 0xFFFFFF and any other flag are errors.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

from audio.codecs.blocks import CodedBlock
from audio.core.errors import FormatError

__all__ = [
    "FLAG_DATA",
    "FLAG_LAST",
    "SPS_HEADER",
    "SPS_DATA",
    "SPS_END",
    "SnsBlock",
    "walk_blocks",
    "coded_blocks",
    "write_blocks",
    "MAX_BLOCKS",
]

FLAG_DATA, FLAG_LAST = 0x00, 0x80
SPS_HEADER, SPS_DATA, SPS_END = 0x48, 0x44, 0x45
MAX_BLOCKS = 1 << 20
"""Upper bound on blocks walked in one take (a corrupt stream cannot loop forever)."""


@dataclass(frozen=True)
class SnsBlock:
    """One data block: ``offset`` of its header, its ``flag``, total ``size`` (bytes), the
    ``samples`` word and the payload's absolute offset and size."""

    offset: int
    flag: int
    size: int
    samples: int
    payload_offset: int
    payload_size: int


def walk_blocks(
    data: bytes | memoryview, path: str = "<buffer>", *, version: int = 0, base_offset: int = 0
) -> list[SnsBlock]:
    """The data blocks of an SNS body (version 0) or of SPS data (version 1).

    Version 0 stops after the 0x80 block or at the end of ``data``; version 1 stops at
    the 'E' block or at the end. Offsets in errors and results are ``base_offset + pos``.

    Parameters
    ----------
    data:
        An SNS body or SPS data.
    path:
        Source name for error messages (file, or archive+member).
    version:
        0: SNS (last block flagged 0x80); 1: SPS ('D' blocks, an 'E' block).
    base_offset:
        Byte offset of ``data`` in its file, so errors name the real offset.
    """
    blocks: list[SnsBlock] = []
    pos, n = 0, len(data)
    valid = (FLAG_DATA, FLAG_LAST) if version == 0 else (SPS_DATA, SPS_END)
    while pos < n:
        at = base_offset + pos
        if pos + 4 > n:
            raise FormatError(path, at, "an SNS block header (8 bytes)", f"{n - pos} bytes left")
        word = struct.unpack_from(">I", data, pos)[0]
        flag, size = word >> 24, word & 0xFFFFFF
        if flag not in valid:
            names = "0x00/0x80" if version == 0 else "'D' (0x44) or 'E' (0x45)"
            raise FormatError(path, at, f"an SNS block flag {names}", f"0x{flag:02X}")
        if version == 1 and flag == SPS_END:
            break
        if size == 0 or size == 0xFFFFFF or size < 8:
            raise FormatError(path, at, "an SNS block size of 8..0xFFFFFE bytes", size)
        if pos + size > n:
            raise FormatError(
                path, at, f"an SNS block of {size} bytes inside the data", f"{n - pos} bytes left"
            )
        samples = struct.unpack_from(">I", data, pos + 4)[0]
        blocks.append(SnsBlock(at, flag, size, samples, at + 8, size - 8))
        if len(blocks) > MAX_BLOCKS:
            raise FormatError(path, at, f"at most {MAX_BLOCKS} SNS blocks")
        pos += size
        if flag == FLAG_LAST and version == 0:
            break
    return blocks


def coded_blocks(
    data: bytes | memoryview, path: str = "<buffer>", *, version: int = 0, base_offset: int = 0
) -> list[CodedBlock]:
    """The data blocks of :func:`walk_blocks` with their payloads, as a codec reads them.

    Parameters
    ----------
    data:
        An SNS body or SPS data.
    path:
        Source name for error messages (file, or archive+member).
    version:
        0: SNS; 1: SPS.
    base_offset:
        Byte offset of ``data`` in its file, so errors name the real offset.
    """
    view = memoryview(data)
    return [
        CodedBlock(
            b.offset,
            b.samples,
            b.payload_offset,
            bytes(view[b.payload_offset - base_offset :][: b.payload_size]),
        )
        for b in walk_blocks(data, path, version=version, base_offset=base_offset)
    ]


def write_blocks(payloads: Iterable[tuple[int, bytes]], *, version: int = 0, mark_last: bool = True) -> bytes:
    """SNS blocks from ``(samples, payload)`` pairs.

    Version 0 flags the last block 0x80 when ``mark_last``; version 1 writes 'D' blocks
    followed by a 4-byte 'E' block.

    Parameters
    ----------
    payloads:
        ``(samples, payload)`` pairs: samples per channel in the block, its codec bytes.
    version:
        0: SNS; 1: SPS.
    mark_last:
        Flag the last version-0 block 0x80.
    """
    items = list(payloads)
    out = bytearray()
    for i, (samples, payload) in enumerate(items):
        size = 8 + len(payload)
        if size >= 0xFFFFFF:
            raise ValueError(f"SNS block payload too large ({len(payload)} bytes)")
        if version == 0:
            flag = FLAG_LAST if mark_last and i == len(items) - 1 else FLAG_DATA
        else:
            flag = SPS_DATA
        out += struct.pack(">II", flag << 24 | size, samples) + payload
    if version == 1:
        out += struct.pack(">I", SPS_END << 24 | 4)
    return bytes(out)
