"""Glyph text, English table (partial) [6]: decode glyph words to characters, encode text to tokens.

Unknown glyphs read as ``[g:N]`` and the file's own tiles as ``[tile:N]``; both escapes encode back.
"""

from __future__ import annotations

import re

from audio.games.radiata.formats.rmf.layout import EN
from audio.games.radiata.formats.rmf.tokens import Glyph, glyph_word, newline, space, walk_tokens

_EN: dict[int, str] = {2: ",", 3: ".", 7: "?", 8: "!", 17: "'"}
_EN.update({83 + k: chr(ord("A") + k) for k in range(26)})
_EN.update({109 + k: chr(ord("a") + k) for k in range(26)})

_EN_REV = {c: i for i, c in _EN.items()}


def decode_glyph(index: int, region: str = EN, tile: bool = False) -> str:
    """The character of glyph ``index``: EN letters and five marks; else ``[g:N]`` / ``[tile:N]``."""
    if tile:
        return f"[tile:{index}]"
    if region == EN and index in _EN:
        return _EN[index]
    return f"[g:{index}]"


def glyph_char(g: Glyph, region: str = EN) -> str:
    return decode_glyph(g.index, region, g.tile)


_ESCAPE = re.compile(r"\[(g|tile):(\d+)\]")


def encode_text(text: str) -> bytes:
    """Tokens for ``text`` (EN table): letters, ``, . ? ! '``, space (``01 00``), newline (``0A 00``),
    and ``[g:N]`` / ``[tile:N]`` escapes. ValueError for a character the table lacks."""
    out = bytearray()
    i = 0
    while i < len(text):
        m = _ESCAPE.match(text, i)
        if m:
            out += glyph_word(int(m.group(2)), tile=m.group(1) == "tile")
            i = m.end()
            continue
        c = text[i]
        if c == " ":
            out += space()
        elif c == "\n":
            out += newline()
        elif c in _EN_REV:
            out += glyph_word(_EN_REV[c])
        else:
            raise ValueError(f"no EN glyph known for {c!r} (write [g:N])")
        i += 1
    return bytes(out)


def text_glyphs(text: str) -> int:
    return sum(1 for t in walk_tokens(encode_text(text)) if isinstance(t, Glyph))
