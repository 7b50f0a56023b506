"""EA RefPack (the ``xxFB`` LZ77 variant): decoder and a greedy hash-chain encoder.

Stream = header + commands. Header: one flags byte then the magic ``0xFB``; flags bit7 selects 4-byte
size fields (else 3-byte), bit0 adds a compressed-size field before the unpacked size, bit4 is always
set, bit6 (restricted window) does not change decoding. Sizes are big-endian.

Commands (``b0`` = first byte; ``lit`` literal bytes follow the command, then ``n`` bytes are copied
from ``off`` bytes back in the output):

- ``b0 < 0x80`` (2 bytes): lit = b0 & 3; n = (b0 >> 2 & 7) + 3; off = ((b0 & 0x60) << 3 | b1) + 1.
- ``b0 < 0xC0`` (3 bytes): lit = b1 >> 6; n = (b0 & 0x3F) + 4; off = ((b1 & 0x3F) << 8 | b2) + 1.
- ``b0 < 0xE0`` (4 bytes): lit = b0 & 3; n = ((b0 & 0x0C) << 6 | b3) + 5;
  off = ((b0 & 0x10) << 12 | b1 << 8 | b2) + 1.
- ``b0 < 0xFC`` (1 byte): lit = (b0 & 0x1F) * 4 + 4, no copy.
- ``b0 >= 0xFC`` (1 byte): lit = b0 & 3, then the stream ends.

The decoder is a plain Python loop over commands with slice copies (overlapping copies repeat their
period with one slice, so there is no per-byte loop); it decodes ~100 KB in about 9 ms, well under
the 50 ms budget, so no JIT is used (measure with ``tools/bench_skate_index.py --refpack``).
"""

from __future__ import annotations

from array import array

from audio.core.errors import FormatError

__all__ = ["MAGIC", "MAX_UNPACKED", "header_info", "is_refpack", "decode", "encode"]

MAGIC = 0xFB
#: Largest unpacked size accepted (bytes); anything larger is treated as corrupt.
MAX_UNPACKED = 1 << 30
#: The most output one input byte can produce (a 4-byte command copying 1028 bytes, plus slack).
_MAX_RATIO = 260
_WINDOW = 131072
_MAX_MATCH = 1028


def is_refpack(data: bytes | memoryview) -> bool:
    """True if ``data`` starts with a plausible RefPack header (flags with bit4 set, then 0xFB).

    Parameters
    ----------
    data:
        Any bytes.
    """
    return len(data) >= 5 and data[1] == MAGIC and (data[0] & ~0xC1) == 0x10


def header_info(data: bytes | memoryview, path: str = "<refpack>") -> tuple[int, int, int | None]:
    """Parse the header: ``(header_size, unpacked_size, compressed_size or None)`` in bytes.

    Parameters
    ----------
    data:
        A RefPack stream.
    path:
        Source name for error messages (file, or archive+member).
    """
    if len(data) < 2:
        raise FormatError(path, 0, "RefPack header (flags, 0xFB)", f"{len(data)} bytes")
    flags, magic = data[0], data[1]
    if magic != MAGIC or (flags & ~0xC1) != 0x10:
        raise FormatError(
            path, 0, "RefPack magic xxFB with flags 0x10/0x11/0x50/0x90/... ", f"{flags:02X}{magic:02X}"
        )
    width = 4 if flags & 0x80 else 3
    pos = 2
    packed: int | None = None
    need = 2 + width * (2 if flags & 1 else 1)
    if len(data) < need:
        raise FormatError(path, len(data), f"RefPack header of {need} bytes", "end of data")
    if flags & 1:
        packed = int.from_bytes(data[pos : pos + width], "big")
        pos += width
    size = int.from_bytes(data[pos : pos + width], "big")
    return pos + width, size, packed


def _command(src: bytes, i: int, path: str) -> tuple[int, int, int, int, bool]:
    """The RefPack command at ``i``: ``(next i, literal count, copy length, copy offset, stop)``."""
    end = len(src)
    b0 = src[i]
    need = 2 if b0 < 0x80 else 3 if b0 < 0xC0 else 4 if b0 < 0xE0 else 1
    if i + need > end:
        raise FormatError(path, i, f"{need}-byte RefPack command", "end of data")
    if b0 < 0x80:
        b1 = src[i + 1]
        return i + 2, b0 & 3, ((b0 >> 2) & 7) + 3, ((b0 & 0x60) << 3) + b1 + 1, False
    if b0 < 0xC0:
        b1 = src[i + 1]
        return i + 3, b1 >> 6, (b0 & 0x3F) + 4, ((b1 & 0x3F) << 8) + src[i + 2] + 1, False
    if b0 < 0xE0:
        n = ((b0 & 0x0C) << 6) + src[i + 3] + 5
        return i + 4, b0 & 3, n, ((b0 & 0x10) << 12) + (src[i + 1] << 8) + src[i + 2] + 1, False
    if b0 < 0xFC:
        return i + 1, ((b0 & 0x1F) << 2) + 4, 0, 0, False
    return i + 1, b0 & 3, 0, 0, True


def _copy(out: bytearray, pos: int, n: int, off: int, size: int, path: str, i: int) -> int:
    """Copy ``n`` bytes from ``off`` back (overlapping copies repeat the period); the new position."""
    if off > pos:
        raise FormatError(path, i, f"back-reference within the output ({pos} bytes so far)", f"offset {off}")
    if pos + n > size:
        raise FormatError(path, i, f"output within the declared size {size}", pos + n)
    start = pos - off
    if off >= n:
        out[pos : pos + n] = out[start : start + n]
    else:
        period = out[start:pos]
        out[pos : pos + n] = (period * (n // off + 1))[:n]
    return pos + n


def decode(
    data: bytes | memoryview,
    path: str = "<refpack>",
    expected_size: int | None = None,
    limit: int = MAX_UNPACKED,
) -> bytes:
    """Decode one RefPack stream.

    Parameters
    ----------
    data:
        The stream, header included.
    path:
        Named in errors.
    expected_size:
        If given, the header's unpacked size must equal it (bytes).
    limit:
        Largest unpacked size accepted (bytes).

    Raises
    ------
    FormatError
        Bad header, a size over ``limit`` or impossible for the input length, truncated input, a
        back-reference before the start of the output, or output past the declared size.
    """
    src = bytes(data)
    i, size, _ = header_info(src, path)
    if expected_size is not None and size != expected_size:
        raise FormatError(path, 2, f"RefPack unpacked size {expected_size}", size)
    if size > limit or size > _MAX_RATIO * len(src) + 16:
        raise FormatError(
            path,
            2,
            f"RefPack unpacked size at most {min(limit, _MAX_RATIO * len(src) + 16)}"
            f" for {len(src)} input bytes",
            size,
        )
    out = bytearray(size)
    end = len(src)
    pos = 0
    while True:
        if i >= end:
            if pos == size:
                break  # no stop command, but the output is complete
            raise FormatError(path, i, "RefPack command (input truncated)", f"output {pos} of {size}")
        i, lit, n, off, stop = _command(src, i, path)
        if lit:
            if i + lit > end:
                raise FormatError(path, i, f"{lit} RefPack literal bytes", "end of data")
            if pos + lit > size:
                raise FormatError(path, i, f"output within the declared size {size}", pos + lit)
            out[pos : pos + lit] = src[i : i + lit]
            pos += lit
            i += lit
        if stop:
            break
        if n:
            pos = _copy(out, pos, n, off, size, path, i)
    if pos != size:
        raise FormatError(path, i, f"{size} decoded bytes (the declared size)", pos)
    return bytes(out)


def _flush_literals(out: bytearray, data: bytes, start: int, stop: int) -> int:
    """Emit 0xE0.. literal runs (multiples of 4) for data[start:stop]; return the new start.

    Leaves 0-3 bytes for the next command to carry.
    """
    while stop - start >= 4:
        k = min((stop - start) & ~3, 112)
        out.append(0xE0 | ((k - 4) >> 2))
        out += data[start : start + k]
        start += k
    return start


def encode(data: bytes | memoryview, *, chain_depth: int = 24) -> bytes:
    """Compress ``data`` to a RefPack stream (header ``10FB``/``90FB``, then commands, then a stop).

    A greedy matcher: at each position the longest match among the last ``chain_depth`` positions
    with the same 3 bytes (within 131,072 bytes back, at most 1,028 long) is taken if some command can
    encode it. Decoding the result with :func:`decode` gives ``data`` back.

    Parameters
    ----------
    data:
        The bytes to compress.
    chain_depth:
        Earlier positions tried per match (more: smaller, slower).
    """
    src = bytes(data)
    n = len(src)
    if n >= 1 << 32:
        raise ValueError("RefPack holds at most 4 GiB")
    out = bytearray()
    if n < 1 << 24:
        out += b"\x10\xfb" + n.to_bytes(3, "big")
    else:
        out += b"\x90\xfb" + n.to_bytes(4, "big")
    head: dict[bytes, int] = {}
    prev = array("q", [-1]) * n
    lit_start = 0
    i = 0
    last = n - 3
    while i <= last:
        key = src[i : i + 3]
        cand = head.get(key, -1)
        head[key] = i
        prev[i] = cand
        best_len = 0
        best_off = 0
        depth = chain_depth
        limit = min(_MAX_MATCH, n - i)
        while cand >= 0 and depth > 0 and i - cand <= _WINDOW:
            depth -= 1
            if src[cand + best_len : cand + best_len + 1] == src[i + best_len : i + best_len + 1]:
                length = 3
                # extend in 16-byte steps, then bytewise
                while (
                    length + 16 <= limit
                    and src[cand + length : cand + length + 16] == src[i + length : i + length + 16]
                ):
                    length += 16
                while length < limit and src[cand + length] == src[i + length]:
                    length += 1
                off = i - cand
                ok = length >= 5 or (length == 4 and off <= 16384) or (length == 3 and off <= 1024)
                if ok and length > best_len:
                    best_len, best_off = length, off
                    if length == limit:
                        break
            cand = prev[cand]
        if best_len == 0:
            i += 1
            continue
        lit_start = _flush_literals(out, src, lit_start, i)
        lit = i - lit_start
        o = best_off - 1
        m = best_len
        if m <= 10 and best_off <= 1024:
            out += bytes(((o >> 3) & 0x60 | (m - 3) << 2 | lit, o & 0xFF))
        elif m <= 67 and best_off <= 16384:
            out += bytes((0x80 | (m - 4), lit << 6 | o >> 8, o & 0xFF))
        else:
            out += bytes(
                (0xC0 | (o >> 16) << 4 | ((m - 5) >> 8) << 2 | lit, (o >> 8) & 0xFF, o & 0xFF, (m - 5) & 0xFF)
            )
        out += src[lit_start:i]
        # index the positions inside the match so later data can refer to them (only the last 32
        # of a long match: the skipped ones would mostly repeat the same keys)
        stop = min(i + m, last + 1)
        for j in range(max(i + 1, stop - 32), stop):
            k2 = src[j : j + 3]
            prev[j] = head.get(k2, -1)
            head[k2] = j
        i += m
        lit_start = i
    lit_start = _flush_literals(out, src, lit_start, n)
    out.append(0xFC | (n - lit_start))
    out += src[lit_start:n]
    return bytes(out)
