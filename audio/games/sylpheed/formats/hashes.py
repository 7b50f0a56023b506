"""The two Project Sylpheed string hashes.

* :func:`name_hash` keys the entries of an ``IPFB`` ``.pak`` archive by the lower-cased
  inner path (``files.tbl`` -> ``0x83421153``).
* :func:`tag_hash` keys the records and fields of ``IDXD`` (CP932 bytes, taken as signed
  int8) and ``IXUD`` (UTF-16BE code units) tables (``SOUNDS`` -> ``0xDC0B7FB3``).

Both come from a public repacker (``shared/specs/sylpheed-chatter.md`` sections 1-2);
:meth:`audio.games.sylpheed.formats.table.Table.hash_report` checks them against the names that named
fields store, so a table that disagrees is reported rather than trusted.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["name_hash", "tag_hash", "encode_name"]


def encode_name(text: str) -> bytes:
    """CP932 bytes of ``text`` (the encoding of ``.pak`` paths and IDXD strings)."""
    return text.encode("cp932")


@lru_cache(maxsize=8192)  # a batch worker looks the same few lines up run after run
def name_hash(inner_path: str) -> int:
    """The ``.pak`` entry id of ``inner_path`` (lower-cased, backslashes kept).

    ``h = ((h << 8) + c) mod 2**32``, reduced ``mod 0xFFF9D7`` whenever a bit of
    ``0xFF800000`` is set; the top byte of the id is the byte sum mod 256.
    """
    h = 0
    s = 0
    for c in encode_name(inner_path.lower()):
        s += c
        h = ((h << 8) + c) & 0xFFFFFFFF
        if h & 0xFF800000:
            h %= 0xFFF9D7
    return h | ((s & 0xFF) << 24)


def tag_hash(text: str, wide: bool = False) -> int:
    """The record / field key of ``text`` in an IDXD (``wide=False``) or IXUD table.

    The empty string hashes to 0.
    """
    if not text:
        return 0
    h = 0
    total = 0
    if wide:
        data = text.encode("utf-16-be")
        for i in range(0, len(data) - 1, 2):
            w = (data[i] << 8) | data[i + 1]
            total += w
            h = (h * 0x10000 + w) % 0xFFFFFF67
        h %= 0xFFFFDF
    else:
        for b in encode_name(text):
            sb = b - 256 if b > 127 else b
            h = (((h & 0xFFFFFF) << 8) + (sb & 0xFFFFFFFF)) % 0xFFFFDF
            total += sb
    return ((total & 0xFF) << 24) | h
