"""The Executor command catalogue (95 commands, ``0x00..0x5E``): name, argument count, kinds.

``21 n`` pops exactly ``argc`` values whatever the script pushed (spec section 4); parameter 0 is
pushed first (the deepest). Kind masks (hex) per parameter: ``80`` number/ID/seconds, ``100``
speech or movie file, ``200`` text/animation name, ``400`` ship, ``800`` flight group or patrol
route, ``4000`` function (a part), ``80000`` named constant, ``100000`` unknown, ``200000`` trigger
condition, ``400000`` camera/flight curve. ``flagged`` marks the seven commands with the
catalogue's flag word (meaning unknown). Index ``0x5F`` and above is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from audio.games.starlancer.script.conditions import CONDITIONS

__all__ = [
    "COMMANDS",
    "COMMAND_INDEX",
    "FILM_COMMANDS",
    "SPEECH_COMMANDS",
    "TRIGGER_CONDITIONS",
    "Command",
    "CommandError",
    "command",
    "condition_code",
    "condition_name",
]


class CommandError(LookupError):
    """A command index outside the catalogue (``0x5F`` and above)."""


@dataclass(frozen=True)
class Command:
    """One catalogue entry; ``labels`` are our short argument names (for display and JSON)."""

    index: int
    name: str
    kinds: tuple[int, ...]
    flagged: bool = False
    labels: tuple[str, ...] = ()

    @property
    def argc(self) -> int:
        return len(self.kinds)

    def label(self, i: int) -> str:
        return self.labels[i] if i < len(self.labels) else f"p{i}"


_ROWS = """
00 PrintShipName D00,80
01 CreateTimer 80,4000,80,80
02 DestroyTimer 80
03 CreateFlightGroup 800
04 DestroyFlightGroup 800
05 Wait 80 f
06 PlaySpeech 100
07 WaitForSpeech - f
08 PlayCommsMovie 100,100,80000
09 WaitForMovie - f
0A PrintDebugMessage 200
0B SetAI 100C00,80000,80,100C00
0C ClearAI 100C00
0D SetPatrolRoute C00,800
0E SetPilot 400,80000
0F SetTriggerState 100C00,200000,80
10 StartDirectorCam 400400,400,80,400,100C00
11 StartShipAnimation 400,200
12 ShipFollowCurve C00,400000,80
13 SetupLaunch 100C00,100C00,80
14 StartLaunch 100C00
15 DisplaySubTitle 80000
16 ResetCodePriority 100C00
17 InterruptTriggerCode -
18 CommsFromShip 400,80000,100
19 CommsFromPilot 80000,80000,100
1A SetInvulnerability 100C00,80
1B MovingShipFollowCurve C00,400000,80,400
1C DisableObject 100C00,80
1D PositionRelative 100C00,400
1E WhenPlayerLastJumped -
1F StartMissileCam 400
20 StartChaseCam 400
21 SetPlayerTarget 400,400
22 SetTargetable 100C00,80
23 PlayMusic 100,80
24 StopDirectorCam -
25 SetActionCentre 400,80
26 Dock 400,400,80
27 DisableTaunts 80
28 Fly 100C00,400,80
29 CommsFromShipOnce 400,80000,100
2A CommsFromPilotOnce 80000,80000,100
2B DisableLights 100C00,80
2C SetEnvironmentFX 80000,80
2D MultiPlayerSync -
2E DisableGenericComms 80
2F DisableGuns 100C00,80
30 SetNavPoint 100C00,400
31 SetEscortPoint 100C00,400
32 ResetAfterBurners - f
33 DisableMissiles 100C00,80
34 DisableEngines 100C00,80
35 DisableEject 100C00,80
36 SetHostile 100C00,80
37 ResetToSpawnPositions -
38 UpdateEnvironmentFXState -
39 SetPrimaryTarget 400
3A WaitForJumpOrLaunch 100C00
3B DoNotDisturb 100C00,80
3C SetEnvironmentFXNebula 80
3D StartShipAnimationReverse 400,200
3E SnapToPoint 400,400
3F PlayFostersLastStand - f
40 OpenInstrument 80
41 CloseInstrument 80
42 DestroySubObject 400,80
43 SetObjective 80,80
44 SetRescueProbabilities 80,80,80
45 IsShipThisPlayer 400
46 SetFlybackMarker 100C00,80
47 ResetFlybackMarker -
48 StopShipAnimation 400,200
49 SetShipAvoidance 100C00,80
4A MatchSpeed 400,80
4B MovingShipBackupCurve C00,400000,80,400
4C WaitForKey 80 f
4D TerminateMission - f
4E TurretSetTarget 100400,400
4F SetAnyTriggerState 100C00,200000,80,80
50 WaitForDirectorCam -
51 KillAllScriptExecutionExecptMe -
52 StackDirectorCam 400400,400,80,400,100C00
53 Scanner 400
54 ReplaceSubObject 400,400
55 Fire 400,80
56 MultiplayerScriptSync 80
57 FriendlyFire -
58 Cloak 100C00,80
59 ReplenishWeapons 400
5A WillsBlag 400
5B ShowHudIcon 80,80
5C DisableListing 400,80
5D DisableObjectAtNextJump 400,80
5E DarrensNaughtyBlag 400,400
"""

_LABELS: dict[int, tuple[str, ...]] = {
    0x01: ("id", "part", "seconds", "firings"),
    0x02: ("id",),
    0x05: ("seconds",),
    0x06: ("speech",),
    0x08: ("film", "speech", "text_id"),
    0x0F: ("entity", "condition", "enable"),
    0x15: ("text_id",),
    0x18: ("ship", "head", "speech"),
    0x19: ("pilot", "head", "speech"),
    0x23: ("music", "immediate"),
    0x27: ("disable",),
    0x29: ("ship", "head", "speech"),
    0x2A: ("pilot", "head", "speech"),
    0x2E: ("disable",),
    0x4F: ("entity", "condition", "enable", "number"),
}


def _load() -> tuple[Command, ...]:
    out = []
    for line in _ROWS.strip().splitlines():
        idx, name, kinds, *flag = line.split()
        ks = () if kinds == "-" else tuple(int(k, 16) for k in kinds.split(","))
        i = int(idx, 16)
        out.append(Command(i, name, ks, bool(flag), _LABELS.get(i, ())))
    return tuple(out)


COMMANDS: tuple[Command, ...] = _load()
"""The catalogue in index order (``COMMANDS[n].index == n``)."""
COMMAND_INDEX: dict[str, int] = {c.name: c.index for c in COMMANDS}
SPEECH_COMMANDS: frozenset[int] = frozenset(
    {0x05, 0x06, 0x07, 0x08, 0x09, 0x15, 0x18, 0x19, 0x23, 0x27, 0x29, 0x2A, 0x2E}
)
"""The calls the extraction recipe (spec section 9) emits as speech events."""
FILM_COMMANDS: dict[int, int] = {0x18: 5, 0x19: 5, 0x29: 6, 0x2A: 6, 0x08: 5}
"""Comms commands -> their film flags (5 loop + own palette; 6 once + hold). 0x08 PlayCommsMovie
plays its film looping (spec 4.1), so we give it 5 as well."""


def command(index: int) -> Command:
    """The catalogue entry ``index``; :class:`CommandError` past ``0x5E``."""
    if not 0 <= index < len(COMMANDS):
        raise CommandError(f"command 0x{index:02X} is outside the 95-entry catalogue")
    return COMMANDS[index]


TRIGGER_CONDITIONS: tuple[str, ...] = tuple(c.name for c in CONDITIONS)
"""``TT_*`` trigger conditions ``0x00..0x22`` (33 scriptable, 2 internal)."""


def condition_name(code: int) -> str:
    """``Destroyed`` for 1; ``TT_0x25`` for codes past the scriptable range."""
    return TRIGGER_CONDITIONS[code] if 0 <= code < len(TRIGGER_CONDITIONS) else f"TT_0x{code:02X}"


def condition_code(name: str | int) -> int:
    """The condition code of a name (case-insensitive, ``TT_`` prefix and ``_`` optional) or a number."""
    if isinstance(name, int):
        return name
    key = name.upper().replace("_", "").removeprefix("TT")
    for i, n in enumerate(TRIGGER_CONDITIONS):
        if n.upper() == key:
            return i
    try:
        return int(name, 0)
    except ValueError:
        raise KeyError(f"unknown trigger condition {name!r}") from None
