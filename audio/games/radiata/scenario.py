"""Scenario hooks: the ``[radiata]`` section and the ``radiata.*`` ``[[event]]`` types.

``[radiata]`` keys (all optional)::

    [radiata]
    install = "demo"            # "demo" = audio/games/radiata/demo, or a folder (relative to the
                                # scenario file) holding the .rmf files
    voices = "voices.toml"      # the voice table, relative to the install ("" = none); default
                                # voices.toml when the install has one
    region = "auto"             # RMF header layout: auto | EN | JP
    fps = 60                    # frames per second of WaitTime / TextSpeed   [unknown]
    default_speed = 3.0         # glyphs/frame when a message sets none       [unknown]
    wait_starts = "at_record"   # at_record | at_message_start                [unknown]
    cursor_waits_for_press = true
    auto_advance_frames = 45
    auto_advance_waits_for_voice = true
    advance_skips_reveal = true
    other_channels = "auto"     # auto | auto_lipsync | ignore (channels -16..-2) [unknown]
    lip_sync_without_bustup = true
    end_stops_voices = false
    on_busy = "queue"           # queue | replace | refuse
    queue_size = 16             # talks waiting at most (more are Dropped)
    choice_timeout_option = 0
    # auto_choose = 0           # with auto-advance, take this option (default: wait)
    party = [40, 41]            # character ids of party slots 1..5 (speaker ids 9901..9905)
    # active_character = 40     # what 9900 resolves to
    voice_gain = 1.0
    # mouth_frames = 30         # Speak / SpeakingCycle: frames speaking (default: while revealing)

(each setting is documented in :class:`audio.games.radiata.talk.settings.TalkSettings`).

``[[event]]`` types (``t`` in seconds)::

    { t = 0.5, type = "radiata.talk", file = "town.rmf", packet = 0, voice = true, auto_advance = false }
    { t = 6.0, type = "radiata.advance" }
    { t = 9.0, type = "radiata.choose", option = 1 }
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from msgspec import Meta

from audio.core import memo
from audio.core.bus import Event
from audio.core.errors import FormatError, ScenarioError
from audio.core.plugin import ScenarioContext
from audio.core.schema import convert
from audio.games.radiata.events import Advance, Choose, Talk
from audio.games.radiata.formats.voicetable import load_voicetable
from audio.games.radiata.system import RadiataTalkSystem, RmfSource
from audio.games.radiata.talk.settings import TalkSettings

__all__ = ["RadiataSection", "demo_root", "scenario_events", "system_from_scenario"]


def demo_root() -> Path:
    """The demo install built by ``tools/build_radiata_demo.py``."""
    return Path(__file__).resolve().parent / "demo"


def _where(ctx: ScenarioContext) -> str:
    return str(ctx.path)


class RadiataSection(TalkSettings, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The ``[radiata]`` scenario section: where the install is, plus every
    :class:`TalkSettings` field (keys in the module docstring)."""

    install: Annotated[str, Meta(min_length=1)] = "demo"
    voices: str | None = None
    region: Literal["auto", "EN", "JP"] = "auto"

    def settings(self) -> TalkSettings:
        """The talk settings of this section."""
        return TalkSettings(**{k: getattr(self, k) for k in TalkSettings.names()})


def _event(cls: type[Event]) -> Callable[[dict[str, Any], ScenarioContext], Event]:
    def make(e: dict[str, Any], ctx: ScenarioContext) -> Event:
        fields = {k: v for k, v in e.items() if k != "type"}
        return convert(fields, cls, source=_where(ctx), where=ctx.where or cls.KIND)

    return make


def scenario_events() -> dict[str, Callable[[dict[str, Any], ScenarioContext], Event]]:
    """Scenario ``[[event]]`` type -> builder ``(entry, ctx) -> Event``."""
    return {
        "radiata.talk": _event(Talk),
        "radiata.advance": _event(Advance),
        "radiata.choose": _event(Choose),
    }


def _root(cfg: RadiataSection, ctx: ScenarioContext) -> Path:
    if cfg.install == "demo":
        return demo_root()
    return ctx.resolve(cfg.install)


def system_from_scenario(section: dict[str, Any], ctx: ScenarioContext) -> RadiataTalkSystem:
    """Build the talk system for a ``[radiata]`` section (keys in the module docstring)."""
    where = _where(ctx)
    cfg: RadiataSection = convert(section, RadiataSection, source=where, where="radiata")
    root = _root(cfg, ctx)
    if not root.is_dir() or not any(root.glob("*.rmf")):
        raise ScenarioError(
            where,
            "radiata.install",
            f"no .rmf files under {root}"
            + (" (run tools/build_radiata_demo.py)" if cfg.install == "demo" else ""),
        )
    table_path = root / (cfg.voices if cfg.voices is not None else "voices.toml")
    settings = cfg.settings()
    try:
        table = None
        if cfg.voices != "" and (cfg.voices is not None or table_path.is_file()):
            table = memo.load("radiata.voices", table_path, lambda: load_voicetable(table_path))
        # a batch worker keeps the parsed RMF files
        source = memo.load("radiata.rmf", root, lambda: RmfSource(root, region=cfg.region), cfg.region)
        return RadiataTalkSystem(source, table, settings)
    except (ValueError, FormatError) as exc:
        raise ScenarioError(where, "radiata", str(exc)) from None
