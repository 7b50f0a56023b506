#!/usr/bin/env python3
"""Build the Radiata Stories demo install under ``audio/games/radiata/demo/``.

Everything is written with barkbus's own writers (no game data):

* ``town.rmf``: an English RMF1 file (header at 0x18 table layout) with four packet slots:
  packet 0 a gate conversation (a Jump prologue; Jack, the guard Gerald and party slot 1 =
  speaker id 9901; voiced and unvoiced lines, a Signal, timed waits and a press-to-continue box),
  packet 1 absent, packet 2 a recruitment talk (an infinite press box, a two-option choice prompt,
  a clip on explicit channel 2), packet 3 bare menu text;
* ``voice/*.vag``: each voiced line spoken by espeak-ng (``tools/speech_synth.py``), 22,050 Hz
  mono, encoded by barkbus's PS-ADPCM encoder into ``VAGp`` files;
* ``voices.toml``: the voice table (line keys and character keys; 9901 resolves to Ridley
  through the scenario's ``party``);
* ``talk.toml``: the demo scenario: two talks, presses of continue and a choice.

Timed waits last the clip plus a margin, as a scriptwriter would set them, so the clips follow
the text. The build is reproducible (the same bytes for a given espeak-ng).
"""

from __future__ import annotations

import math
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

from audio.containers.vag import encode_vag
from audio.games.radiata.formats import rmf
from audio.games.radiata.formats.voicetable import VoiceEntry, write_voicetable
from audio.games.radiata.talk.typewriter import reveal_frames

OUT = ROOT / "audio" / "games" / "radiata" / "demo"
SAMPLE_RATE = 22_050
FPS = 60
JACK, RIDLEY, GERALD = 1, 2, 30
CHARACTERS = {JACK: "Jack", RIDLEY: "Ridley", GERALD: "Gerald"}
VOICES = {
    JACK: ["-v", "en-us", "-s", "165", "-p", "55"],
    RIDLEY: ["-v", "en-us+f3", "-s", "160", "-p", "70"],
    GERALD: ["-v", "en-gb", "-s", "140", "-p", "30"],
}


@dataclass(frozen=True)
class Line:
    """One message: speaker table index, who speaks it (for the voice), text and its clip."""

    speaker: int
    who: int
    text: str
    sound: int | None = None
    channel: int = 0x1F
    wait: str = "timed"  # timed | press | infinite
    signal_after: int | None = None
    speed: float = 3.0


GATE = [
    Line(1, JACK, "Excuse me, is this the way to the castle?", 101, signal_after=32, speed=4.0),
    Line(2, GERALD, "Halt! Who goes there? State your name.", 201, wait="press"),
    Line(3, RIDLEY, "Jack, mind your manners.", 301),
    Line(1, JACK, "Fine, fine.", None),
]
RECRUIT = [
    Line(2, GERALD, "Will you join the Knights of Radiata?", 202, wait="infinite"),
    Line(1, JACK, "", None, wait="choice"),
    Line(2, GERALD, "Then follow me.", 203, channel=2),
]
CHOICES = ["Yes, sir!", "Not today."]


def synthesize(line: Line, workdir: Path) -> np.ndarray:
    """espeak-ng -> trimmed mono at 22,050 Hz, peak -1 dBFS, int16."""
    y = speak(line.text, VOICES[line.who], workdir, SAMPLE_RATE)
    y = y / max(1e-9, float(np.max(np.abs(y)))) * 0.89
    return np.round(y * 32767.0).astype(np.int16)


def clip_frames(pcm: np.ndarray) -> int:
    return math.ceil(len(pcm) * FPS / SAMPLE_RATE)


def message(line: Line, clips: dict[int, np.ndarray]) -> bytes:
    """The line's records; a timed wait lasts its clip plus 20 frames (30 for a silent line)."""
    frames = clip_frames(clips[line.sound]) if line.sound is not None else 10
    wait = {"timed": (frames + 20, 2), "press": (60, 3), "infinite": (0xFFFF, 3)}.get(line.wait)
    voice = (line.channel, line.sound) if line.sound is not None else None
    signals = [(1, line.signal_after)] if line.signal_after is not None else []
    if line.wait == "choice":
        return rmf.build_message(line.speaker, "", mode=1, speed=line.speed, choices=CHOICES)
    return rmf.build_message(
        line.speaker, line.text, mode=0, speed=line.speed, voice=voice, signals=signals, wait=wait
    )


def build_rmf(clips: dict[int, np.ndarray]) -> bytes:
    gate = rmf.jump(1, 0, 0) + b"".join(message(ln, clips) for ln in GATE)
    recruit = b"".join(message(ln, clips) for ln in RECRUIT)
    packets = [
        rmf.write_packet([JACK, GERALD, 9901], gate),
        None,
        rmf.write_packet([JACK, GERALD], recruit),
        rmf.write_packet([], rmf.encode_text("Radiata Castle")),
    ]
    return rmf.write_rmf(packets, rmf.EN)


def schedule(data: bytes, clips: dict[int, np.ndarray]) -> list[str]:
    """The scenario's events: the press and the choice come after the lines they answer."""
    f = rmf.read_rmf(data, "town.rmf")
    events = ['{ t = 0.5, type = "radiata.talk", file = "town.rmf", packet = 0 }']
    frame = math.ceil(0.5 * FPS)
    gate = f.script(0).messages
    for i, m in enumerate(gate):
        r = reveal_frames(m.steps, 3.0) or 0
        line = GATE[i]
        if line.wait == "press":
            press = frame + max(r, clip_frames(clips[line.sound])) + 30
            events.append(f'{{ t = {press / FPS:.3f}, type = "radiata.advance" }}')
            frame = press
        else:
            frame += r + m.wait.duration
    start = frame + 60
    events.append(f'{{ t = {start / FPS:.3f}, type = "radiata.talk", file = "town.rmf", packet = 2 }}')
    r0 = reveal_frames(f.script(2).messages[0].steps, 3.0) or 0
    press = start + 1 + max(r0, clip_frames(clips[202])) + 30
    events.append(f'{{ t = {press / FPS:.3f}, type = "radiata.advance" }}')
    choose = press + 90
    events.append(f'{{ t = {choose / FPS:.3f}, type = "radiata.choose", option = 0 }}')
    end = choose + clip_frames(clips[203]) + 120
    return [f"{end / FPS:.1f}", *events]


def scenario_text(duration: str, events: list[str]) -> str:
    body = "\n".join(f"[[event]]\n{_inline(e)}\n" for e in events)
    return f"""# Demo talk for Radiata Stories (built by tools/build_radiata_demo.py).
# Packet 0: Jack asks the gate guard Gerald the way (a Signal at "castle"), Gerald's press box waits
# for the continue button, Ridley (speaker id 9901 = party slot 1) chides Jack, Jack answers unvoiced.
# Packet 2: Gerald asks Jack to join (an infinite box), Jack picks "Yes, sir!", Gerald answers on
# explicit voice channel 2.
[scenario]
name = "radiata_talk"
duration = {duration}
seed = 3

[radiata]
install = "demo"
party = [{RIDLEY}]

{body}"""


def _inline(e: str) -> str:
    """``{{ t = 1, type = "x" }}`` -> one ``key = value`` per line."""
    inner = e.strip()[1:-1].strip()
    parts, cur, quoted = [], "", False
    for ch in inner:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return "\n".join(parts)


def voice_table(out: Path) -> str:
    rows = [
        VoiceEntry(101, out / "voice" / "jack_101.vag", "town.rmf", 0),
        VoiceEntry(201, out / "voice" / "gerald_201.vag", "town.rmf", 0),
        VoiceEntry(301, out / "voice" / "ridley_301.vag", character_id=RIDLEY),
        VoiceEntry(202, out / "voice" / "gerald_202.vag", character_id=GERALD),
        VoiceEntry(203, out / "voice" / "gerald_203.vag", character_id=GERALD),
    ]
    head = (
        "# Voice table of the Radiata demo (built by tools/build_radiata_demo.py): the 0F 28 sound id is\n"
        "# opaque, so this table names each clip's audio, by (file, packet, sound_id) or by\n"
        "# (character_id, sound_id). Paths are relative to this file.\n"
    )
    return head + write_voicetable(rows, CHARACTERS, out)


def build(out: Path) -> list[Path]:
    """Build the whole install into ``out``; returns the files written."""
    if shutil.which("espeak-ng") is None:
        raise SystemExit("espeak-ng is needed to synthesise the demo lines (apt-get install espeak-ng)")
    lines = [ln for ln in GATE + RECRUIT if ln.sound is not None]
    clips: dict[int, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ln in lines:
            clips[ln.sound] = synthesize(ln, Path(tmp))
    if out.exists():
        shutil.rmtree(out)
    (out / "voice").mkdir(parents=True)
    files = []
    for ln in lines:
        p = out / "voice" / f"{CHARACTERS[ln.who].lower()}_{ln.sound}.vag"
        p.write_bytes(encode_vag(clips[ln.sound], SAMPLE_RATE, name=p.stem))
        files.append(p)
    data = build_rmf(clips)
    (out / "town.rmf").write_bytes(data)
    (out / "voices.toml").write_text(voice_table(out), encoding="utf-8")
    duration, *events = schedule(data, clips)
    (out / "talk.toml").write_text(scenario_text(duration, events), encoding="utf-8")
    return [out / "town.rmf", *files, out / "voices.toml", out / "talk.toml"]


def main(argv: list[str] | None = None) -> int:
    return builder_main(__doc__ or "", OUT, build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
