"""The Starlancer radio: comms window, film flags, the 5-line queue, remark gates, one speech voice."""

from audio.games.starlancer.radio.radio import (
    FLAG_HOLD,
    FLAG_LOOP,
    FLAG_NO_LINE,
    FLAG_PALETTE,
    MODES,
    NOBODY,
    Line,
    Presenter,
    Radio,
    RadioSettings,
)

__all__ = [
    "FLAG_HOLD",
    "FLAG_LOOP",
    "FLAG_NO_LINE",
    "FLAG_PALETTE",
    "MODES",
    "NOBODY",
    "Line",
    "Presenter",
    "Radio",
    "RadioSettings",
]
