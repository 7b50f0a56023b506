"""The Skate 3 scenario section: :func:`system_from_scenario` builds the speech system from
``[skate]``, :func:`scenario_events` the ``skate.*`` ``[[event]]`` builders (keys: see
:mod:`audio.games.skate.system`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from audio.core import memo
from audio.core.bus import Event
from audio.core.clock import RngStreams
from audio.core.errors import FormatError, ScenarioError
from audio.core.plugin import ScenarioContext
from audio.core.schema import Struct, convert
from audio.games.skate.events import (
    ChallengeChange,
    PedMove,
    PedSpawn,
    PhotoFlag,
    PlayerSpeed,
    SpeechValue,
    ZombieMode,
)
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.mixcurves import MixCurves, MixTable
from audio.games.skate.speech.rand import AwcGenerator, manager_rand
from audio.games.skate.speech.tuning import load_tuning
from audio.games.skate.system import DEMO_INSTALL, DEMO_TUNING, BankTakeSource, SkateSpeechSystem

__all__ = ["SkateSection", "scenario_events", "system_from_scenario"]


def _event_factory(cls: type[Event]) -> Callable[[dict[str, Any], ScenarioContext], Event]:
    def make(d: dict[str, Any], ctx: ScenarioContext) -> Event:
        fields = {k: v for k, v in d.items() if k != "type"}
        return convert(fields, cls, source=str(ctx.path), where=ctx.where or f"event {cls.KIND}")

    return make


def scenario_events() -> dict[str, Callable[[dict[str, Any], ScenarioContext], Event]]:
    """Factories for the scenario's ``[[event]]`` types ``skate.*``."""
    return {
        cls.KIND: _event_factory(cls)
        for cls in (PedSpawn, SpeechValue, PedMove, PlayerSpeed, ZombieMode, ChallengeChange, PhotoFlag)
    }


class SkateSection(Struct, kw_only=True):
    """The ``[skate]`` scenario section (see the module docstring for each key)."""

    install: str = "demo"
    tuning: str | None = None
    manager_rand: Literal["msvc", "awc"] = "msvc"
    manager_seed: Literal["scenario"] | Annotated[int, Meta(ge=0, le=2**32 - 1)] = "scenario"
    library_seed: Literal["scenario", "table"] | Annotated[int, Meta(ge=0)] = "scenario"
    streams_per_channel: Annotated[int, Meta(ge=1, le=16)] = 2
    phone_ring_seconds: Annotated[float, Meta(ge=0.0, le=60.0)] = 1.0
    delay_factor: Annotated[float, Meta(ge=0.0, le=16.0)] = 1.0
    delay_frames: Annotated[int, Meta(ge=1, le=3600)] = 4
    maincast: bool = True
    mix: MixTable = msgspec.field(default_factory=MixTable)
    prefetch: bool = False
    cache_mb: Annotated[float, Meta(gt=0.0, le=65536.0)] = 96.0
    console_start: Annotated[float, Meta(ge=0.0, le=86400.0)] = 0.0


def _library_generator(setting: Any, streams: Any, path: str) -> AwcGenerator:
    if setting == "table":
        return AwcGenerator()
    if setting == "scenario":
        return AwcGenerator.from_streams(streams, "skate.library")
    if isinstance(setting, int) and not isinstance(setting, bool):
        return AwcGenerator.from_table(setting)
    raise ScenarioError(
        path, "[skate] library_seed", f'expected "scenario", "table" or an integer, got {setting!r}'
    )


def system_from_scenario(section: dict[str, Any], ctx: ScenarioContext) -> SkateSpeechSystem:
    """Build the system from a scenario's ``[skate]`` section.

    Parameters
    ----------
    section:
        The ``[skate]`` table (keys: see the module docstring).
    ctx:
        The scenario: its path (messages, relative paths) and seed (the "scenario" seeds).
    """
    path = str(ctx.path)
    base = ctx.base
    cfg = convert(section, SkateSection, source=path, where="skate")
    streams = RngStreams(ctx.seed)
    try:
        tuning_path = base / cfg.tuning if cfg.tuning else DEMO_TUNING
        tuning = memo.load("skate.tuning", tuning_path, lambda: load_tuning(tuning_path))
    except FormatError as exc:
        raise ScenarioError(path, "skate.tuning", str(exc)) from None
    install = cfg.install
    root = _install_root(install, base, path)
    try:
        inst = memo.load("skate.install", _speech_folder(root), lambda: _open_install(root), str(root))
        living_bank = inst.bank("livingworld")
    except (OSError, KeyError, FormatError) as exc:
        raise ScenarioError(path, "[skate] install", str(exc)) from None
    cache_mb, prefetch = cfg.cache_mb, cfg.prefetch
    gen = _library_generator(cfg.library_seed, streams, path)
    living = SpeechLibrary(living_bank.events, living_bank.headers, gen)
    maincast = maincast_source = None
    if cfg.maincast and "maincast" in inst.banks:
        mb = inst.bank("maincast")
        maincast = SpeechLibrary(mb.events, mb.headers, gen)
        maincast_source = BankTakeSource(mb, cache_mb)
    kind = cfg.manager_rand
    mseed = streams.seed32("skate.manager") if cfg.manager_seed == "scenario" else cfg.manager_seed
    try:
        rng = manager_rand(kind, seed=mseed, generator=gen)
    except ValueError as exc:
        raise ScenarioError(path, "[skate] manager_rand", str(exc)) from None
    curves = MixCurves.from_table(cfg.mix, path, "skate.mix")
    source = BankTakeSource(living_bank, cache_mb)
    spc, frames = cfg.streams_per_channel, cfg.delay_frames
    nums = {"phone_ring_seconds": cfg.phone_ring_seconds, "delay_factor": cfg.delay_factor}
    return SkateSpeechSystem(
        living,
        tuning,
        source,
        maincast=maincast,
        maincast_source=maincast_source,
        rng=rng,
        streams_per_channel=spc,
        curves=curves,
        delay_frames=frames,
        voice_bits=living_bank.voice_bits,
        voice_names=source.voice_names(),
        prefetch=prefetch,
        console_start=cfg.console_start,
        **nums,
    )


def _open_install(root: Path) -> Any:
    """The install at ``root`` with its living-world index built (what a batch worker keeps)."""
    from audio.games.skate.formats.install import SkateInstall

    inst = SkateInstall.open(root)
    for bank in inst.banks.values():
        bank.clips_by_hdr_id()
    return inst


def _speech_folder(root: Path) -> Path:
    """What identifies an install for the per-worker memo: its speech folder (the banks' files),
    or the root when that folder is named in another case (:meth:`SkateInstall.open` finds it)."""
    from audio.games.skate.formats.install import SPEECH_DIR

    folder = root.joinpath(*SPEECH_DIR.parts)
    return folder if folder.is_dir() else root


def _install_root(install: str, base: Path, path: str) -> Path:
    if install == "demo":
        return DEMO_INSTALL
    root = Path(install)
    return root if root.is_absolute() else base / root
