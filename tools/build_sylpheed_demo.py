#!/usr/bin/env python3
"""Build the Project Sylpheed demo install under ``audio/games/sylpheed/demo/``.

Everything is written with barkbus's own writers in the game's layout:

* ``dat/GP_MAIN_GAME_E.pak`` (+ ``.p00``): ``message\\PresetMessage_<who>.tbl`` rule tables and
  their ``_msg`` message tables for four speakers (wingman ELLEN, squad leader RAYMOND, two
  ADAN pilots), ``message\\UnitMessageSet_S02.tbl`` and ``stage\\UnitGroup_S02.tbl``;
* ``dat/tables.pak`` (+ ``.p00``): ``eng\\sounds.tbl`` (SOUNDS cue ids, FILES bank paths);
* ``dat/sound.pak`` (+ ``.p00``): one ``.slb`` per line, an XACT wave bank (big-endian
  ``DNBW``, version 37) holding 16-bit big-endian PCM at 24,000 Hz;
* ``dogfight.toml``: a demo scenario (lock-on barks, damage chatter, orders, kills).

Field values follow the seed 000 census (Interval 0/3/5/30/120 s, IntervalFluctuation 0/2,
Priority 1-7, Probability 0-100, some Yes one-shot lines, 59 event records per table with
the unused ones at Probability 0 / MessageCount 0). One message id (MSG_ADAN_789) has no
recording on purpose, like the 17 the seed lists. Lines are synthesised with espeak-ng
(deterministic), trimmed, resampled 22,050 -> 24,000 Hz and lightly saturated. The build is
reproducible: the same bytes every run (for a given espeak-ng).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from speech_synth import builder_main, speak

from audio.containers.xwb import NewWave, write_wavebank
from audio.games.sylpheed.formats.cues import bank_path, cue_name, write_sounds
from audio.games.sylpheed.formats.pak import write_pak
from audio.games.sylpheed.formats.presets import (
    Crew,
    EventRecord,
    Message,
    MessagePage,
    MessageTable,
    RuleTable,
    UnitMessageSet,
    message_table_path,
    rule_table_path,
    write_message_table,
    write_rule_table,
    write_unit_message_set,
)
from audio.games.sylpheed.formats.unitgroup import Member, Squadron, write_unit_group

SAMPLE_RATE = 24_000
BANK_VERSION = 37
OUT = ROOT / "audio" / "games" / "sylpheed" / "demo"

EVENTS = (
    [f"LOCKON_{i}" for i in range(1, 13)]
    + ["LOCKON_UP", "LOCKON_DOWN"]
    + [f"PLAYER_HP_LESS_{n}" for n in (10, 30, 50)]
    + [f"PLAYER_AMMO_LESS_{n}" for n in ("00", "10", "40")]
    + [
        f"{p}_{k}"
        for p in ("ORDER_WINGMAN", "ORDER_SQUAD", "ORDOR_SQUADRON")
        for k in ("FORMATION", "ATTACK", "COVER", "EXTENDED")
    ]
    + [
        "DAMAGED",
        "DAMAGED_BY_PLAYER_GREATER_50",
        "DAMAGED_BY_PLAYER_50_30",
        "HP_LESS_10",
        "HP_LESS_30",
        "HP_LESS_50",
        "KILLED",
        "KILL_UNIT",
        "KILL_PLAYER",
    ]
    + [f"LOST_{k}_BY_PLAYER" for k in ("BRIDGE", "SHIELD", "THRUSTER", "TURRET")]
    + [
        "SHIELD_DOWNED",
        "ATTACK_SUCCEEDED",
        "COUNTER",
        "COUNTER_TO_PLAYER",
        "FOUND_PLAYER",
        "AVOID_ATTACK",
        "AVOIDED_BY_PLAYER",
        "AVOIDED_PLAYER_ATTACK",
        "ATTACK_IS_AVOIDED",
        "EXTENDED",
        "DAMAGED_TO_PLAYER",
        "RETURNED",
        "TALK",
        "TM_TO_PLAYER",
    ]
)
"""The 59 publicly known event names (the game's tables have 64)."""


@dataclass(frozen=True)
class Speaker:
    roster: str  # Sperkers entry
    label: str  # display name in the _msg pages
    family: str  # message id family: MSG_<family>_<NNN>
    voice: str  # espeak-ng voice
    speed: int  # words per minute
    pitch: int  # espeak-ng pitch 0..99


@dataclass(frozen=True)
class Ev:
    event: str
    probability: int
    priority: int
    interval: int
    fluctuation: int
    lines: tuple[tuple[str, bool], ...]  # (text, one-shot?)
    pattern: str = "Sound"
    effective: int = 0


SPEAKERS = {
    "Ellen": Speaker("CharacterELLEN", "ELLEN", "BIRD", "en-us+f3", 175, 55),
    "Raymond": Speaker("CharacterRAYMOND", "RAYMOND", "RHIN", "en-us+m3", 165, 40),
    "ADAN_plA": Speaker("CharacterADANPLA", "ADAN PILOT", "VOICE_A", "en+m7", 180, 30),
    "ADAN_plB": Speaker("CharacterADANPLB", "ADAN ACE", "ADAN", "en-gb+m4", 165, 35),
}

RULES: dict[str, list[Ev]] = {
    "Ellen": [
        Ev("LOCKON_1", 100, 3, 5, 2, (("Target locked. Fire!", False), ("Lock confirmed, Katana!", False))),
        Ev("LOCKON_UP", 50, 2, 3, 0, (("More locks coming up.", False),)),
        Ev(
            "PLAYER_HP_LESS_50",
            100,
            5,
            30,
            2,
            (("Katana, you're taking hits!", False), ("Your shields are failing!", False)),
            "Window",
            3,
        ),
        Ev("PLAYER_HP_LESS_10", 100, 7, 120, 0, (("Katana! Get out of there!", True),), "Window", 5),
        Ev("PLAYER_AMMO_LESS_10", 100, 3, 30, 0, (("You're low on ammo.", False),)),
        Ev("ORDER_WINGMAN_ATTACK", 100, 4, 0, 0, (("Roger, engaging!", False), ("Copy, moving in.", False))),
        Ev("ORDER_WINGMAN_COVER", 100, 4, 0, 0, (("I've got your back.", False),)),
        Ev("KILL_UNIT", 60, 2, 5, 2, (("Splash one!", False), ("Target destroyed.", False))),
        Ev("DAMAGED", 30, 3, 5, 2, (("I'm hit!", False),)),
        Ev("HP_LESS_10", 100, 6, 120, 0, (("Ellen here, I'm going down!", True),)),
    ],
    "Raymond": [
        Ev("ORDER_SQUAD_ATTACK", 100, 5, 0, 0, (("Rhino flight, attack!", False),)),
        Ev("ORDER_SQUAD_FORMATION", 100, 4, 0, 0, (("Rhino flight, form up on me.", False),)),
        Ev(
            "ORDOR_SQUADRON_ATTACK",
            100,
            6,
            0,
            0,
            (("All squadrons, begin the assault!", True), ("All units, press the attack!", False)),
        ),
        Ev("KILL_UNIT", 40, 2, 5, 2, (("Good kill.", False),)),
        Ev("DAMAGED", 25, 3, 5, 2, (("Taking fire!", False),)),
        Ev("HP_LESS_50", 100, 4, 30, 0, (("Rhino one, hull at half.", False),)),
    ],
    "ADAN_plA": [
        Ev("FOUND_PLAYER", 100, 2, 30, 0, (("Enemy fighter spotted!", False),)),
        Ev("DAMAGED_BY_PLAYER_GREATER_50", 50, 2, 5, 2, (("Hull breach!", False), ("He got me!", False))),
        Ev("KILLED", 100, 1, 0, 0, (("No!", False), ("Aaagh!", False))),
        Ev("AVOID_ATTACK", 30, 1, 3, 0, (("Missed me!", False),)),
        Ev("COUNTER_TO_PLAYER", 40, 2, 5, 2, (("Get him off me!", False),)),
    ],
    "ADAN_plB": [
        Ev("FOUND_PLAYER", 100, 3, 30, 0, (("Delta Saber sighted. Engaging.", False),)),
        Ev("LOST_SHIELD_BY_PLAYER", 100, 3, 5, 0, (("Our shields are down!", False),), "Window", 3),
        Ev("KILLED", 100, 2, 0, 0, (("For ADAN!", True), ("", False))),  # the "" line has no recording
        Ev("HP_LESS_50", 50, 2, 30, 2, (("Damage critical!", False),)),
    ],
}

TABLES = {
    "Ellen": "PresetMessage_Ellen_S02-1",
    "Raymond": "PresetMessage_Raymond_S02-1",
    "ADAN_plA": "PresetMessage_ADAN_plA",
    "ADAN_plB": "PresetMessage_ADAN_plB",
}
ELLEN_PHASE2 = "PresetMessage_Ellen_S02-2"
MISSING_ID = "MSG_ADAN_789"


@dataclass(frozen=True)
class Line:
    message_id: str
    text: str
    who: str


def _ids() -> tuple[dict[str, list[EventRecord]], list[Line]]:
    """Assign message ids; returns event records per speaker and every recorded line."""
    records: dict[str, list[EventRecord]] = {}
    lines: list[Line] = []
    for who, evs in RULES.items():
        sp = SPEAKERS[who]
        n = 0
        by_event = {}
        for ev in evs:
            pairs = []
            for text, yes in ev.lines:
                if not text:
                    pairs.append((MISSING_ID, yes))
                    continue
                n += 1
                mid = f"MSG_{sp.family}_{10 * n:03d}"
                pairs.append((mid, yes))
                lines.append(Line(mid, text, who))
            by_event[ev.event] = EventRecord(
                ev.event,
                ev.effective,
                ev.interval,
                ev.priority,
                ev.probability,
                len(pairs),
                ev.fluctuation,
                ev.pattern,
                tuple(pairs),
            )
        recs = []
        for name in EVENTS:
            recs.append(by_event.get(name) or EventRecord(name, 0, 0, 1, 0, 0, 0, "Sound", ()))
        records[who] = recs
    return records, lines


def _phase2(recs: list[EventRecord]) -> list[EventRecord]:
    """Ellen's phase-2 table: a per-phase dialogue variant (phase 1 wins the merge) and a
    Priority change, like the 224 mismatching merges the seed counts."""
    out = []
    for r in recs:
        if r.event == "LOCKON_1":
            r = EventRecord(
                r.event,
                r.effective_time,
                r.interval,
                r.priority,
                r.probability,
                1,
                r.interval_fluctuation,
                r.pattern,
                r.lines[1:],
            )
        elif r.event == "ORDER_WINGMAN_ATTACK":
            r = EventRecord(
                r.event,
                r.effective_time,
                r.interval,
                5,
                r.probability,
                r.message_count,
                r.interval_fluctuation,
                r.pattern,
                r.lines,
            )
        out.append(r)
    return out


def build_tables() -> tuple[dict[str, bytes], dict[str, bytes], list[Line]]:
    """The game-pak and tables-pak entries (inner path -> bytes) and the lines to record."""
    records, lines = _ids()
    texts = {ln.message_id: ln for ln in lines}
    game: dict[str, bytes] = {}
    for who, table in TABLES.items():
        sp = SPEAKERS[who]
        variants = [(table, records[who])]
        if who == "Ellen":
            variants.append((ELLEN_PHASE2, _phase2(records[who])))
        for name, recs in variants:
            game[rule_table_path(name)] = write_rule_table(RuleTable(name, tuple(recs), (sp.roster,)))
            ids = list(dict.fromkeys(m for r in recs for m, _ in r.lines))
            msgs = tuple(
                Message(
                    f"Message_{i:03d}",
                    mid,
                    (
                        MessagePage(
                            (texts[mid].text if mid in texts else "(no recording)", sp.label) + ("0",) * 7
                        ),
                    ),
                )
                for i, mid in enumerate(ids)
            )
            game[message_table_path(name)] = write_message_table(MessageTable(name + "_msg", (), msgs))
    ums = UnitMessageSet(
        (
            Crew("MessageSet_Katana", 1, ("", "", "")),
            Crew("MessageSet_Ellen", 1, (TABLES["Ellen"], ELLEN_PHASE2, TABLES["Ellen"])),
            Crew("MessageSet_Raymond", 1, (TABLES["Raymond"], TABLES["Raymond"], "")),
            Crew("MessageSet_ADAN_plA", 4, (TABLES["ADAN_plA"], "", "")),
            Crew("MessageSet_ADAN_plB", 1, (TABLES["ADAN_plB"], TABLES["ADAN_plB"], TABLES["ADAN_plB"])),
        )
    )
    game["message\\UnitMessageSet_S02.tbl"] = write_unit_message_set(ums)
    squads = [
        Squadron(
            "TCN001",
            0x659AFF47,
            3,
            "TCAF",
            "AI_TCAF_RhinoFlight",
            "Formation_4_Bird",
            False,
            (
                Member("UN_f001_TCAF_DeltaSaber_T", "MessageSet_Raymond", 1, "RAYMOND"),
                Member("UN_f001_TCAF_DeltaSaber_T", "MessageSet_Raymond", 2, ""),
                Member("UN_f001_TCAF_DeltaSaber_T", "MessageSet_Raymond", 1, ""),
            ),
            0,
        ),
        Squadron(
            "TCN004",
            0x659B0046,
            2,
            "TCAF",
            "AI_TCAF_RhinoFlight",
            "Formation_2_Rhino1",
            False,
            (
                Member("UN_f001_TCAF_DeltaSaber_T_Player", "MessageSet_Katana", 1, "Character_Player_Test"),
                Member("UN_f001_TCAF_DeltaSaber_T", "MessageSet_Ellen", 1, "ELLEN"),
            ),
            0,
        ),
        Squadron(
            "ADN101",
            0x669B0047,
            1,
            "ADAN",
            "AI_ADAN_CraftSquadron_Veteran",
            "Formation_4_Bird",
            False,
            (Member("UN_e010_ADAN_Attacker_S", "MessageSet_ADAN_plA", 4, ""),),
            0,
        ),
        Squadron(
            "ADN102",
            0x679B0048,
            2,
            "ADAN",
            "AI_ADAN_CraftSquadron_Veteran",
            "Formation_ADAN_Turret07_30",
            True,
            (
                Member("UN_e004_ADAN_ElanPlus_N", "MessageSet_ADAN_plB", 1, ""),
                Member("UN_e010_ADAN_Attacker_S", "MessageSet_ADAN_plA", 9, ""),
            ),
            0,
        ),
    ]
    game["stage\\UnitGroup_S02.tbl"] = write_unit_group(squads, roster_at=2)
    cues = [
        (cue_name(ln.message_id), 1000 + i, bank_path(cue_name(ln.message_id))) for i, ln in enumerate(lines)
    ]
    tables = {"eng\\sounds.tbl": write_sounds(cues)}
    return game, tables, lines


def synthesize(line: Line, workdir: Path) -> np.ndarray:
    """espeak-ng -> trimmed, 24 kHz, lightly saturated int16 mono."""
    sp = SPEAKERS[line.who]
    y = speak(line.text, ["-v", sp.voice, "-s", str(sp.speed), "-p", str(sp.pitch)], workdir, SAMPLE_RATE)
    y = np.tanh(2.0 * y / max(1e-9, np.max(np.abs(y)))) / np.tanh(2.0) * 0.85
    return np.round(y * 32767.0).astype(np.int16)


def scenario_text() -> str:
    return """# Demo dogfight for Project Sylpheed chatter (built by tools/build_sylpheed_demo.py).
# Stage S02 crews: the player's flight (TCN004: Katana + wingman ELLEN), Rhino leader RAYMOND,
# and two ADAN squadrons (generic pilots ADANPLA, the ace ADANPLB).
[scenario]
name = "sylpheed_dogfight"
duration = 40.0
seed = 7

[listener]
position = [0.0, 0.0, 0.0]
yaw = 0.0

[sylpheed]
install = "demo"
lang = "eng"

[[sylpheed.crew]]
stage = "S02"
squadron = "TCN004"

[[sylpheed.crew]]
stage = "S02"
crew = "MessageSet_Raymond"

[[sylpheed.crew]]
stage = "S02"
squadron = "ADN102"

[[event]]
t = 0.5
type = "sylpheed.bark"
speaker = "RAYMOND"
event = "ORDOR_SQUADRON_ATTACK"

[[event]]
t = 3.5
type = "sylpheed.bark"
speaker = "ADANPLB"
event = "FOUND_PLAYER"

[[event]]
t = 4.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "ORDER_WINGMAN_ATTACK"

[[event]]
t = 7.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "LOCKON_1"

[[event]]
t = 7.5
type = "sylpheed.bark"
speaker = "ELLEN"
event = "LOCKON_1"

[[event]]
t = 9.0
type = "sylpheed.bark"
speaker = "ADANPLA"
event = "DAMAGED_BY_PLAYER_GREATER_50"

[[event]]
t = 10.5
type = "sylpheed.bark"
speaker = "ADANPLA"
event = "KILLED"

[[event]]
t = 11.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "KILL_UNIT"

[[event]]
t = 13.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "PLAYER_HP_LESS_50"

[[event]]
t = 13.2
type = "sylpheed.bark"
speaker = "ADANPLA"
event = "AVOID_ATTACK"

[[event]]
t = 16.0
type = "sylpheed.bark"
speaker = "RAYMOND"
event = "ORDOR_SQUADRON_ATTACK"

[[event]]
t = 17.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "LOCKON_1"

[[event]]
t = 20.0
type = "sylpheed.phase"
phase = 2

[[event]]
t = 21.0
type = "sylpheed.bark"
speaker = "ADANPLB"
event = "LOST_SHIELD_BY_PLAYER"

[[event]]
t = 21.2
type = "sylpheed.bark"
speaker = "RAYMOND"
event = "DAMAGED"

[[event]]
t = 24.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "PLAYER_HP_LESS_10"

[[event]]
t = 26.5
type = "sylpheed.bark"
speaker = "ADANPLB"
event = "KILLED"

[[event]]
t = 27.5
type = "sylpheed.bark"
speaker = "ELLEN"
event = "KILL_UNIT"

[[event]]
t = 30.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "PLAYER_HP_LESS_10"

[[event]]
t = 31.0
type = "sylpheed.bark"
speaker = "RAYMOND"
event = "ORDER_SQUAD_FORMATION"

[[event]]
t = 34.0
type = "sylpheed.enable"
enabled = false

[[event]]
t = 35.0
type = "sylpheed.bark"
speaker = "ELLEN"
event = "LOCKON_1"
"""


def build(out: Path) -> list[Path]:
    """Build the whole install into ``out``; returns the files written."""
    if shutil.which("espeak-ng") is None:
        raise SystemExit("espeak-ng is needed to synthesise the demo lines (apt-get install espeak-ng)")
    game, tables, lines = build_tables()
    sound: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ln in lines:
            pcm = synthesize(ln, Path(tmp))
            cue = cue_name(ln.message_id)
            bank = write_wavebank(
                [NewWave.pcm16(pcm, SAMPLE_RATE, big_endian=True, name=cue)],
                big_endian=True,
                version=BANK_VERSION,
                name=cue,
            )
            sound[bank_path(cue)] = bank
    if out.exists():
        shutil.rmtree(out)
    dat = out / "dat"
    files = write_pak(dat / "GP_MAIN_GAME_E.pak", game)
    files += write_pak(dat / "tables.pak", tables)
    files += write_pak(dat / "sound.pak", sound, compress=False)
    (out / "dogfight.toml").write_text(scenario_text(), encoding="utf-8")
    files.append(out / "dogfight.toml")
    return files


def main(argv: list[str] | None = None) -> int:
    return builder_main(__doc__ or "", OUT, build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
