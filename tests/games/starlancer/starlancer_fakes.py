"""Builders for the Starlancer tests: a small mission made with our writers, the spec's bytes."""

from __future__ import annotations

from pathlib import Path

from audio.games.starlancer.formats.dte import (
    Dte,
    FlightGroup,
    Global,
    ObjectEntry,
    Part,
    Ship,
    Trigger,
    write_routine,
)
from audio.games.starlancer.script.asm import Asm

ROOT = Path(__file__).resolve().parents[3]

# spec 3.5, typed from the spec's byte listing (not produced by our writer)
SPEC_BLOCK = bytes.fromhex(
    "3800"
    "2c05"
    "3200"
    "2a10"
    "6d73315f62616e5f3030312e757400"
    "2118"
    "2109"
    "2800"
    "2105"
    "2703"
    "3200"
    "02"
    "23000f"
    "2a08"
    "7830312e757400"
    "2106"
    "2107"
    "3201"
    "43"
    "32"
    "02000000"
    "00000000"
)
# seed 001: mission1's first trigger block, byte for byte
MISSION1_BLOCK = bytes.fromhex(
    "1c00 2201 2117 2700 2800 02 240007 2215 420004 2218 2117 3201 43 320101000000 0800220d".replace(" ", "")
)


class Pool:
    """A string pool builder: ``pool.add("name")`` -> byte offset."""

    def __init__(self) -> None:
        self.data = bytearray(b"\0")

    def add(self, s: str) -> int:
        off = len(self.data)
        self.data += s.encode("latin-1") + b"\0"
        return off


def small_mission() -> Dte:
    """Two ships (Naginata, Bandit), one flight group, two globals, a start part, a helper part
    and two triggers on the ships (Destroyed on Naginata, ShotAt on Bandit)."""
    pool = Pool()
    ships = [
        Ship(object_id=0, name=pool.add("(A1)Naginata"), flight_group=0, pilot=3, kind=1),
        Ship(object_id=1, name=pool.add("Bandit"), flight_group=0xFF, pilot=0xFF, kind=0x2B),
    ]
    fgs = [FlightGroup(object_id=2, name=pool.add("Alpha"), wing=0)]
    gl = [Global(name=pool.add("(GV)convoykilled"), value=0), Global(name=pool.add("(GV)score"), value=7)]
    objects = [
        ObjectEntry(kind=0, trigger_count=1, first_trigger=0),
        ObjectEntry(kind=0, trigger_count=1, first_trigger=1),
        ObjectEntry(kind=1),
    ]
    start = (
        Asm()
        .call("DisableGenericComms", ("byte", 1))
        .call("CommsFromPilotOnce", ("byte", 20), ("byte", 0), "ms_speech\\ms1_ins_001.ut")
        .call("WaitForMovie")
        .call("DisableGenericComms", ("byte", 0))
        .op("spawn_part", 1)
        .ret()
    )
    helper = Asm().call("Wait", ("const", 0)).call("PlaySpeech", "x01.ut").call("WaitForSpeech").ret()
    t0 = (
        Asm()
        .call("CommsFromShip", ("ship", 0), ("byte", 0), "ms1_ban_001.ut")
        .call("WaitForMovie")
        .push(("global", 0))
        .push(("byte", 1))
        .op("equal")
        .branch_if_zero("else")
        .call("CommsFromShipOnce", ("ship", 0), ("byte", 1), "ms1_ban_002.ut")
        .jump("end")
        .label("else")
        .op("call_part", 1)
        .label("end")
        .ret()
    )
    t1 = (
        Asm()
        .call("Wait", ("byte", 2))
        .call("CommsFromShip", ("local", 0), ("byte", 0), "ms1_ban_003.ut")
        .ret()
    )
    blocks = [
        write_routine(t0.code(), pad=b"\x2c"),
        write_routine(t1.code(), pad=b"\x32"),
        write_routine(start.code()),
        write_routine(helper.code(), [3]),
    ]
    offs = []
    at = 0
    for b in blocks:
        offs.append(at)
        at += len(b)
    script = b"".join(blocks)
    triggers = [
        Trigger(condition=1, repeat=0, link=offs[0] // 2, armed=1),
        Trigger(condition=0, repeat=1, link=offs[1] // 2, armed=1),
    ]
    parts = [
        Part(name=pool.add("Start"), start=offs[2] // 2, flags=1, extent=len(blocks[2]) // 2),
        Part(name=pool.add("Later"), start=offs[3] // 2, flags=0, extent=len(blocks[3]) // 2),
    ]
    # triggers: object 0 (Naginata) holds trigger 0 in its slice; object 1 (Bandit) trigger 1
    return Dte(
        pool=bytes(pool.data),
        script=script,
        ships=ships,
        flight_groups=fgs,
        globals=gl,
        objects=objects,
        triggers=triggers,
        parts=parts,
    )
