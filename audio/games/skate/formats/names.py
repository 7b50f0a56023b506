"""Speech clip names: ``<event>_<voice id>[_<voice name>]_<line>.dat``.

Examples: ``501_59_busm1_Warn_n.dat`` -> (501, 59, "busm1", "Warn_n"); ``1901_53_Shout.dat`` ->
(1901, 53, None, "Shout").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CLIP_RE", "ClipName", "parse_clip_name", "format_clip_name"]

#: The clip-name pattern (``shared/specs/skate3-speech.md`` section 1).
CLIP_RE = re.compile(r"^(\d+)_(\d+)_(?:([a-z]+\d)_)?(.+)\.dat$")


@dataclass(frozen=True)
class ClipName:
    """The parts of a clip's file name."""

    event: int  # the event number in the name (501 for ``501_warn``)
    voice_id: int  # speaker voice id (41-96 in the living world)
    voice_name: str | None  # e.g. ``busm1``; None for generic voices
    line: str  # the rest, e.g. ``Warn_n``


def parse_clip_name(name: str) -> ClipName | None:
    """Parse a ``.dat`` file name (a directory part is ignored); None if it is not a clip."""
    m = CLIP_RE.match(name.rsplit("/", 1)[-1])
    if m is None:
        return None
    return ClipName(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))


def format_clip_name(parts: ClipName) -> str:
    """The ``.dat`` file name of ``parts`` (inverse of :func:`parse_clip_name`)."""
    voice = f"{parts.voice_id}_{parts.voice_name}" if parts.voice_name else str(parts.voice_id)
    return f"{parts.event}_{voice}_{parts.line}.dat"
