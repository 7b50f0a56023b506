"""The 35 trigger conditions the engine raises (spec 11.6): values, checked operands, kept slots, groups.

Each row: name, the event's values in thread-local order (``name:kind:checked``; kind ``ship`` or
``number``), the kept-value slot (``push_event_value``: 0 ShotAt, 1 Destroyed), the repeat mode
exempt from a group veto, the group handler (``average`` damage, ``all_destroyed``, ``pass``) and
whether the event also goes to the ship's flight group and squads. Source:
``OpenReliant src/engine/vm/conditions.zig`` (the executable's descriptor table at ``0x004F6698``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CONDITIONS", "Condition", "Value"]


@dataclass(frozen=True)
class Value:
    """One event value: its name, kind (``ship`` or ``number``) and whether operands check it."""

    name: str
    kind: str
    checked: bool


@dataclass(frozen=True)
class Condition:
    """One trigger condition (see the module docstring)."""

    code: int
    name: str
    values: tuple[Value, ...]
    kept_slot: int | None = None
    exempt_repeat: int | None = None
    handler: str | None = None
    groups: bool = False


_ROWS = """
00 ShotAt Attacker:ship:y,Shield:number:n,Hull:number:n,Victim:ship:y,WeaponFired:number:y 0 - average g
01 Destroyed Killer:ship:y,Victim:ship:y 1 1 all_destroyed g
02 Launched LaunchedShip:ship:y - - - g
03 CameraReached - - - - -
04 ShipReached ReachedShip:ship:y - - - -
05 ProximityClose ApproachingShip:ship:y,Proximity:number:n - - - -
06 ProximityGeneral ApproachingShip:ship:y,Proximity:number:n - - - -
07 ObjectScooped ObjectScooped:ship:y - - - -
08 PlayerReadyToJump - - - - -
09 JumpedIn JumpedInShip:ship:y - - - g
0A FGJumpedIn ShipJumpedIn:ship:y - - - g
0B PlayerReadyToWarp - - - - -
0C JumpedThroughHoop - - - - -
0D PlayerWantsBackup - - - - -
0E RipperGrabbedObject ObjectGrabbed:ship:y - - - -
0F RipperDroppedObject ObjectDropped:ship:y - - - -
10 Cloaked CloakingShip:ship:y - 1 pass g
11 Decloaked CloakingShip:ship:y - 1 pass g
12 Targetted Aggressor:ship:y - - - -
13 PlayerL1DoubleTap - - - - -
14 PlayerL2DoubleTap - - - - -
15 PlayerR1DoubleTap - - - - -
16 PlayerR2DoubleTap - - - - -
17 PlayerL1L2R1R2Pressed - - - - -
18 PlayerL1R1Pressed - - - - -
19 GameTimerExpired - - - - -
1A TractorBeamLocked TractoredShip:ship:y,TractoringShip:ship:y - - - g
1B TractorBeamBroken TractoredShip:ship:y,TractoringShip:ship:y - - - g
1C InsideObject - - - - -
1D OutsideObject - - - - -
1E Docked - - - - -
1F Undocked - - - - -
20 BeingChased ChasedShip:ship:y,Chaser:ship:y - - - g
21 PlayerCallReinforcements PlayerTargetted:ship:y - - - -
22 ExplosionShip ExplosionShip:ship:y - - - -
"""


def _load() -> tuple[Condition, ...]:
    out = []
    for row in _ROWS.strip().splitlines():
        code, name, values, kept, exempt, handler, groups = row.split()
        vals = tuple(
            Value(n, k, c == "y") for n, k, c in (v.split(":") for v in values.split(",") if values != "-")
        )
        out.append(
            Condition(
                int(code, 16),
                name,
                vals,
                None if kept == "-" else int(kept),
                None if exempt == "-" else int(exempt),
                None if handler == "-" else handler,
                groups == "g",
            )
        )
    return tuple(out)


CONDITIONS: tuple[Condition, ...] = _load()
"""The conditions ``0x00..0x22`` in code order."""
