"""The speech events of a mission, by the spec's extraction recipe (section 9).

Entry points: the start part, every part, and the triggers that sit in an object's slice with a
link (their condition and subject from sections 5 and 7). Each routine is disassembled by control
flow with a symbolic stack; every call of Wait, PlaySpeech, WaitForSpeech, PlayCommsMovie,
WaitForMovie, DisplaySubTitle, CommsFromShip/Pilot(Once), PlayMusic, DisableTaunts and
DisableGenericComms becomes an event with its arguments, the guard it sits under, and for the comms
commands the film flags (5 loop, 6 once + hold) and mode ``now``. Ships resolve to names, speech
names to ``msspeech.hog`` members (spec 1.2). ``call_part``/``spawn_part`` edges are kept for
ordering.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from audio.core.errors import FormatError
from audio.games.starlancer.formats.dte import NONE16, Dte, Routine
from audio.games.starlancer.formats.hog import Hog, member_name
from audio.games.starlancer.script.commands import FILM_COMMANDS, SPEECH_COMMANDS, condition_name
from audio.games.starlancer.script.disasm import Call, Sym, disassemble_routine

__all__ = ["Edge", "MissionComms", "SpeechEvent", "entry_routines", "mission_comms", "speaker_of"]


@dataclass
class SpeechEvent:
    """One speech-relevant command call (``ip`` in bytes from the routine's block start)."""

    mission: str
    routine: str
    condition: str | None
    subject: str | None
    ip: int
    command: str
    args: dict[str, str]
    guard: list[str]
    speaker: str | None = None
    speech: str | None = None
    member: str | None = None
    member_found: bool | None = None
    film_flags: int | None = None
    mode: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def text(self) -> str:
        where = f"{self.routine}" + (f" [{self.condition} on {self.subject}]" if self.condition else "")
        bits = [
            f"{where} @{self.ip}: {self.command}(" + ", ".join(f"{k}={v}" for k, v in self.args.items()) + ")"
        ]
        if self.speaker:
            bits.append(f"speaker {self.speaker}")
        if self.member:
            bits.append(f"member {self.member}" + ("" if self.member_found is not False else " (MISSING)"))
        if self.film_flags is not None:
            bits.append(f"film flags {self.film_flags} ({'loop' if self.film_flags & 1 else 'once+hold'})")
        if self.guard:
            bits.append("if " + " and ".join(self.guard))
        return "; ".join(bits)


@dataclass
class Edge:
    """A ``call_part`` (synchronous) or ``spawn_part`` (new thread) from a routine."""

    routine: str
    ip: int
    kind: str
    part: str
    guard: list[str]


@dataclass
class MissionComms:
    events: list[SpeechEvent] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def entry_routines(dte: Dte, errors: list[str] | None = None) -> list[tuple[Routine, str | None, str | None]]:
    """``(routine, condition, subject)``: start part(s), every other part, then slice triggers.
    A routine whose block is bad is left out and its error appended to ``errors`` (else raised)."""
    out: list[tuple[Routine, str | None, str | None]] = []
    starts = dte.start_parts()
    order = starts + [i for i, p in enumerate(dte.parts) if p.start != NONE16 and i not in starts]
    heads: list[tuple[str, int, str | None, str | None]] = [("part", i, None, None) for i in order]
    for i, t in enumerate(dte.triggers):
        oid = dte.trigger_subject(i)
        if t.link != NONE16 and oid is not None:
            heads.append(("trigger", i, condition_name(t.condition), dte.object_name(oid)))
    for kind, i, cond, subj in heads:
        try:
            out.append((dte.routine_of(kind, i), cond, subj))
        except FormatError as exc:
            if errors is None:
                raise
            errors.append(str(exc))
    return out


def speaker_of(call: Call) -> str | None:
    """Who speaks: ``ship N (name)``, ``pilot N``, ``nobody``, or a symbolic description."""
    if call.index in (0x18, 0x29):
        return _ship(call.args[0])
    if call.index in (0x19, 0x2A):
        return _pilot(call.args[0])
    if call.index == 0x08:
        return "nobody"
    return None


def _ship(s: Sym) -> str:
    if s.kind in ("ship", "ship_wide"):
        return s.text
    if s.kind == "component":
        return f"ship({s.args[0]}) component {s.args[1]}"
    if s.kind == "local":
        return f"the triggering event's ship ({s.text})"
    if s.kind == "null":
        return "nobody"
    return s.text


def _pilot(s: Sym) -> str:
    if s.kind == "byte":
        return f"pilot {s.args[0]}"
    if s.kind == "const" and s.args[1] is not None:
        return f"pilot {s.args[1]}"
    return f"pilot {s.text}"


def _event(
    mission: str, label: str, cond: str | None, subj: str | None, call: Call, hog: Hog | None
) -> SpeechEvent:
    ev = SpeechEvent(
        mission,
        label,
        cond,
        subj,
        call.ip,
        call.name,
        call.arg_map(),
        list(call.guard),
        speaker=speaker_of(call),
    )
    speech_at = {0x06: 0, 0x08: 1, 0x18: 2, 0x19: 2, 0x29: 2, 0x2A: 2}.get(call.index)
    if speech_at is not None and call.args[speech_at].kind == "string":
        ev.speech = str(call.args[speech_at].args[0])
        ev.member = member_name(ev.speech)
        if hog is not None:
            ev.member_found = ev.member in hog
    if call.index in FILM_COMMANDS:
        ev.film_flags, ev.mode = FILM_COMMANDS[call.index], "now"
    return ev


def mission_comms(dte: Dte, mission: str = "mission", speech_hog: Hog | None = None) -> MissionComms:
    """Run the recipe over every entry routine of ``dte``."""
    out = MissionComms()
    for routine, cond, subj in entry_routines(dte, out.errors):
        dis = disassemble_routine(dte, routine)
        label = routine.label
        out.errors += [f"{label} @{ip}: {msg}" for ip, msg in dis.errors]
        for call in dis.calls:
            if call.kind == "command" and call.index in SPEECH_COMMANDS:
                out.events.append(_event(mission, label, cond, subj, call, speech_hog))
            elif call.kind in ("call_part", "spawn_part"):
                out.edges.append(
                    Edge(
                        label,
                        call.ip,
                        "call" if call.kind == "call_part" else "spawn",
                        call.name,
                        list(call.guard),
                    )
                )
    return out
