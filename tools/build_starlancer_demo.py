#!/usr/bin/env python3
"""Build the Starlancer demo install under ``audio/games/starlancer/demo/``.

Everything is written with barkbus's own writers in the game's layout (no game data):

* ``resource.hog``: ``mission99.dte``, RefPack-compressed as the shipped missions are: ships
  ``(A1)Naginata`` (wingman, pilot 7), ``Bandit`` (pilot 9), ``(C)Reliant`` (the carrier, its
  bridge officer pilot 60), ``Pirate`` (pilot 10), a flight group, one global
  ``(GV)convoykilled``; a start part (CreateFlightGroup, DisableGenericComms around the
  instructor's CommsFromPilotOnce, WaitForMovie, CreateTimer), a timer part (CommsFromShip,
  WaitForMovie, Wait, a two-arm random_branch with ten reserved slots holding stale bytes), and
  triggers (Destroyed on Bandit: CommsFromShipOnce + a guarded PlaySpeech/WaitForSpeech; ShotAt on
  Naginata), their operands written 0xFFFFFFFF (unchecked: 0 would be ship 0, spec 11.9);
* ``ms_speech/msspeech.hog``: one uncompressed member per line (no extension, upper case like the
  shipped archive, plus its 0xCD filler record), each a ``.ut`` file encoded from espeak-ng speech
  with the Digital Anvil LPC encoder (:func:`audio.games.starlancer.formats.ut.encode_ut`),
  including the radio's own lines the scenario's seed picks (taunt, last words, kill remark,
  the player's status question and the wingman's answer, missile warning, jump reminder);
* ``mission.toml``: the demo scenario (a gated remark, queue drops, an expiry, a preemption, a
  taunt, a kill remark with Moose's reply, a wingman report, a missile warning, a jump reminder).

Prints each line's waveform SNR (encoder output decoded vs the input). Reproducible for a given
espeak-ng.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from speech_synth import speak

from audio.containers import refpack
from audio.games.starlancer.formats.dte import (
    Dte,
    FlightGroup,
    Global,
    ObjectEntry,
    Part,
    Ship,
    Trigger,
    write_dte,
    write_routine,
)
from audio.games.starlancer.formats.hog import write_hog
from audio.games.starlancer.formats.ut import decode_ut, encode_ut
from audio.games.starlancer.script.asm import Asm

OUT = ROOT / "audio" / "games" / "starlancer" / "demo"
SAMPLE_RATE = 22_050
LINES = {  # member -> (espeak voice args, text)
    "ms99_ins_001": (["-v", "en-us+m3", "-s", "165"], "Welcome back, pilot. Form up on the Reliant."),
    "ms99_rel_001": (["-v", "en+m1", "-s", "170"], "Reliant to Alpha, check in."),
    "ms99_nag_001": (["-v", "en+f2", "-s", "175"], "Alpha two, copy."),
    "ms99_nag_002": (["-v", "en+f2", "-s", "175"], "Roger, Reliant."),
    "ms99_nag_003": (["-v", "en+f2", "-s", "180"], "Splash one! Nice shooting."),
    "ms99_nag_004": (["-v", "en+f2", "-s", "190"], "I'm hit, I'm hit!"),
    "ms99_rel_002": (["-v", "en+m1", "-s", "170"], "Convoy is clear. Return to base."),
    "ban_res_001": (["-v", "en+m4", "-s", "180"], "Bandits, two o'clock."),
    "vip_res_002": (["-v", "en+m2", "-s", "180"], "On your six!"),
    # the radio's own lines the demo's seed picks (spec 11.15 names; rand() % count)
    "rus_tnt_009": (["-v", "ru", "-s", "170"], "You will burn, Alliance dog!"),
    "rus_dth_004": (["-v", "ru", "-s", "190"], "No! Not like this!"),
    "plyrkl_006": (["-v", "en+m3", "-s", "170"], "Good kill, pilot."),
    "mphud_004": (["-v", "en+m1", "-s", "175"], "What's your status?"),
    "vip_status_014": (["-v", "en+f2", "-s", "175"], "Took a few hits, still flying."),
    "plck_008": (["-v", "en+m3", "-s", "185"], "Missile lock! Break, break!"),
    "jmp_002": (["-v", "en+m3", "-s", "170"], "Jump point's clear. Engage your jump drive."),
}


UNCHECKED = (0xFFFFFFFF,) * 5
"""Trigger operands the engine does not compare (spec 11.9: 0 would mean ship 0)."""


class Pool:
    def __init__(self) -> None:
        self.data = bytearray(b"\0")

    def add(self, s: str) -> int:
        off = len(self.data)
        self.data += s.encode("latin-1") + b"\0"
        return off


def routines() -> list[tuple[str, bytes]]:
    """(role, routine bytes) in script order: two trigger blocks, then the parts."""
    naginata, reliant, bandit = ("ship", 0), ("ship", 2), ("ship", 1)
    on_bandit = (
        Asm()
        .call("CommsFromShipOnce", naginata, ("byte", 1), "ms99_nag_003.ut")
        .call("WaitForMovie")
        .push(("global", 0))
        .push(("byte", 1))
        .op("equal")
        .branch_if_zero("end")
        .call("PlaySpeech", "ms99_rel_002.ut")
        .call("WaitForSpeech")
        .label("end")
        .ret()
    )
    on_naginata = (
        Asm().call("CommsFromShip", naginata, ("byte", 3), "ms99_nag_004.ut").call("WaitForMovie").ret()
    )
    start = (
        Asm()
        .call("CreateFlightGroup", ("flight_group", 0))
        .call("DisableGenericComms", ("byte", 1))
        .call("CommsFromPilotOnce", ("byte", 82), ("byte", 0), "ms_speech\\ms99_ins_001.ut")
        .call("WaitForMovie")
        .call("DisableGenericComms", ("byte", 0))
        .call("CreateTimer", ("byte", 1), ("byte", 1), ("const", 0), ("byte", 1))
        .ret()
    )
    stale = bytes.fromhex("2c00320a28002c01210b")  # SetAI-looking residue in the unused arm slots
    reminder = (
        Asm()
        .call("CommsFromShip", reliant, ("byte", 0), "ms99_rel_001.ut")
        .call("WaitForMovie")
        .call("Wait", ("byte", 1))
        .random_branch("other", [("copy", 50)], reserve=10, stale=stale, unused=0x2C)
        .label("copy")
        .call("CommsFromShip", naginata, ("byte", 1), "ms99_nag_001.ut")
        .jump("done")
        .label("other")
        .call("CommsFromShip", naginata, ("byte", 0), "ms99_nag_002.ut")
        .label("done")
        .call("WaitForMovie")
        .push(bandit)
        .call("SetPrimaryTarget")
        .ret()
    )
    return [
        ("t_bandit", write_routine(on_bandit.code(), pad=b"\x2c")),
        ("t_naginata", write_routine(on_naginata.code(), pad=b"\x32")),
        ("start", write_routine(start.code(), [19], pad=b"\x21", filler=b"\x08\x00\x22\x0d")),
        ("reminder", write_routine(reminder.code(), pad=b"\x43")),
    ]


def mission() -> Dte:
    pool = Pool()
    rs = routines()
    offs, at = {}, 0
    for role, b in rs:
        offs[role] = (at, len(b))
        at += len(b)
    ships = [
        Ship(object_id=0, name=pool.add("(A1)Naginata"), flight_group=0, pilot=7, kind=0x0F),
        Ship(object_id=1, name=pool.add("Bandit"), flight_group=0xFF, pilot=9, kind=0x2B),
        Ship(object_id=2, name=pool.add("(C)Reliant"), flight_group=0xFF, pilot=60, kind=0x0C),
        Ship(object_id=4, name=pool.add("Pirate"), flight_group=0xFF, pilot=10, kind=0x2B),
    ]
    triggers = [
        Trigger(condition=1, repeat=0, link=offs["t_bandit"][0] // 2, operands=UNCHECKED),
        Trigger(condition=0, repeat=1, link=offs["t_naginata"][0] // 2, operands=UNCHECKED),
    ]
    objects = [
        ObjectEntry(kind=0, trigger_count=1, first_trigger=1),
        ObjectEntry(kind=0, trigger_count=1),
        ObjectEntry(kind=0),
        ObjectEntry(kind=1),
        ObjectEntry(kind=0),
    ]
    parts = [
        Part(name=pool.add("Start"), start=offs["start"][0] // 2, flags=1, extent=offs["start"][1] // 2),
        Part(
            name=pool.add("Reliant check-in"), start=offs["reminder"][0] // 2, extent=offs["reminder"][1] // 2
        ),
    ]
    fgs = [FlightGroup(object_id=3, name=pool.add("Alpha"))]
    gls = [Global(name=pool.add("(GV)convoykilled"), value=0)]
    return Dte(
        path="mission99.dte",
        pool=bytes(pool.data),
        script=b"".join(b for _, b in rs),
        ships=ships,
        flight_groups=fgs,
        globals=gls,
        triggers=triggers,
        objects=objects,
        parts=parts,
    )


SCENARIO = """# Starlancer demo (built by tools/build_starlancer_demo.py): mission99 in the game's layout,
# run by the engine's rules (spec 11). The start part creates Alpha (Naginata) and mutes generic
# chatter around the instructor's line (the remark at 1.5 s is Gated); the Reliant and the Bandit
# exist from the start (the first curve's work). The Bandit's Destroyed at 6 s fires its trigger
# (a once-film line, then a guarded PlaySpeech); six queued lines arrive while lines play (the
# extra ones are Dropped, one Expires); the timer's Reliant check-in picks a reply by
# random_branch; the Bandit's
# hit on Naginata at 27.5 s fires its ShotAt trigger (preempting the reply) and a taunt; the
# player's kill of the Pirate at 36 s: its last words, then Moose's kill remark; a wingman
# status report at 44 s (answered 250 ticks later); a missile warning at 50 s; the jump reminder
# at 53 s.
[scenario]
name = "starlancer_mission99"
duration = 60.0
seed = 3

[starlancer]
install = "demo"
mission = "mission99.dte"
globals = { "(GV)convoykilled" = 1 }
created = ["Reliant", "Bandit", "Pirate"]
hostile = ["Bandit", "Pirate"]

[starlancer.pilots]  # display names of the faces (the game's are GText ids in its language file)
82 = "Instructor"
7 = "Naginata"
60 = "Reliant"
9 = "Bandit"
10 = "Pirate"
2 = "Moose"

[[event]]
t = 1.5
type = "starlancer.say"
speaker = "ship:Naginata"
speech = "vip_res_002.ut"
mode = "queued"
remark = "generic"

[[event]]
t = 6.0
type = "starlancer.trigger"
condition = "Destroyed"
subject = "Bandit"
locals = ["Naginata", "Bandit"]

[[event]]
t = 6.5
type = "starlancer.say"
speaker = "ship:Naginata"
speech = "ban_res_001.ut"

[[event]]
t = 6.6
type = "starlancer.say"
speaker = "ship:Reliant"
speech = "ms99_rel_001.ut"
expiry = 150

[[event]]
t = 6.7
type = "starlancer.say"
speaker = "ship:Naginata"
speech = "vip_res_002.ut"

[[event]]
t = 6.8
type = "starlancer.say"
speaker = "ship:Naginata"
speech = "ms99_nag_001.ut"

[[event]]
t = 6.9
type = "starlancer.say"
speaker = "ship:Naginata"
speech = "ms99_nag_002.ut"

[[event]]
t = 7.0
type = "starlancer.say"
speaker = "ship:Naginata"
speech = "ban_res_001.ut"

[[event]]
t = 27.5
type = "starlancer.happen"
what = "hit"
ship = "Naginata"
other = "Bandit"
value = 30

[[event]]
t = 36.0
type = "starlancer.happen"
what = "kill"
ship = "Pirate"
kind = "fighter"

[[event]]
t = 44.0
type = "starlancer.happen"
what = "wingman"
ship = "Naginata"
kind = "status"
value = 1

[[event]]
t = 50.0
type = "starlancer.happen"
what = "missile"

[[event]]
t = 52.5
type = "starlancer.happen"
what = "missile_clear"

[[event]]
t = 53.0
type = "starlancer.happen"
what = "variable"
kind = "jump_ready"
value = 1
"""


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ms_speech").mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp())
    members = []
    try:
        for name, (voice, text) in LINES.items():
            x = speak(text, voice, tmp, SAMPLE_RATE)
            x = 0.7 * x / max(1e-9, float(np.abs(x).max()))
            ut = encode_ut(x.astype(np.float32), SAMPLE_RATE, lowpass_hz=6000.0)
            y = decode_ut(ut, name)
            ref = np.round(x * 32767) / 32768
            n = min(len(y), len(ref))
            snr = 10 * np.log10(np.sum(ref[:n] ** 2) / max(np.sum((ref[:n] - y[:n]) ** 2), 1e-20))
            print(f"{name}: {len(x) / SAMPLE_RATE:.2f} s, {len(ut)} bytes, waveform SNR {snr:.2f} dB")
            members.append((name.upper(), ut))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    (OUT / "ms_speech" / "msspeech.hog").write_bytes(write_hog(members, filler=True))
    dte = write_dte(mission())
    (OUT / "resource.hog").write_bytes(write_hog([("mission99.dte", refpack.encode(dte))]))
    (OUT / "mission.toml").write_text(SCENARIO, encoding="utf-8")
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT} ({total} bytes; mission {len(dte)} bytes expanded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
