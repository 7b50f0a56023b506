"""barkbus: a real-time audio middleware emulator for in-game speech.

An event bus receives game events and game-faithful speech systems decide what is said, for
four games: Skate 3's living-world pedestrian speech (:mod:`audio.games.skate`), Project
Sylpheed's combat chatter (:mod:`audio.games.sylpheed`), Starlancer's mission-script radio
comms (:mod:`audio.games.starlancer`) and Radiata Stories' dialogue voice cues
(:mod:`audio.games.radiata`), plus test tones (:mod:`audio.games.tone`). The chosen takes are
decoded from the games' own banks (:mod:`audio.codecs`) and rendered through a block DSP graph
(:mod:`audio.dsp`) by the engine (:mod:`audio.core.engine`).

The package root exports, imported on first use (so ``barkbus --help`` stays fast):

- the port API: :func:`open_system`, :func:`open_scenario`, :class:`VoicePort`,
  :func:`make_event`, :class:`PortError` (:mod:`audio.port`);
- the engine: :class:`Engine`, :class:`EngineConfig` (:mod:`audio.core.engine`) and the game
  contract :class:`GameSystem` (:mod:`audio.core.plugin`);
- the error types (:mod:`audio.core.errors`): :class:`BarkbusError` and its kinds.

>>> import audio
>>> port = audio.open_system(game="tone")
>>> port.emit("tone.on", speaker="ann", line="hello")
>>> block = port.advance(0.5)                 # (24000, 2) float32

Rooms: :mod:`audio.core` (base layer, bus, engine, the game contract), :mod:`audio.dsp`,
:mod:`audio.codecs` (sample codecs), :mod:`audio.containers` (EA SNR/SNS, XWB, RIFF,
VAG), :mod:`audio.games`, :mod:`audio.offline` (scenarios, render, batch),
:mod:`audio.live` (device, TUI), :mod:`audio.port` (embedding API, OSC, ``barkbus live``).
"""

from __future__ import annotations

from audio.core.exports import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "open_system": "audio.port.api",
    "open_scenario": "audio.port.api",
    "VoicePort": "audio.port.api",
    "make_event": "audio.core.fields",
    "PortError": "audio.core.fields",
    "Engine": "audio.core.engine",
    "EngineConfig": "audio.core.engine",
    "GameSystem": "audio.core.plugin",
    "BarkbusError": "audio.core.errors",
    "InputError": "audio.core.errors",
    "FormatError": "audio.core.errors",
    "UnsupportedError": "audio.core.errors",
    "ScenarioError": "audio.core.errors",
    "GraphError": "audio.core.errors",
    "OutputError": "audio.core.errors",
    "RunFailure": "audio.core.errors",
}
"""Exported name -> the module it is imported from on first use."""

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
