#!/usr/bin/env python3
"""Build the embedded Skate 3 demo install under ``audio/games/skate/demo/``.

Everything is written with barkbus's own writers (``audio.games.skate.formats.install.write_install``) in the
game's layout::

    data/audio/english/livingworldspeech.big     EB v3: the .dat clips, livingworld_Events.evt and
                                                 the nested livingworldhdr.big / livingworldsth.big
    plaza.toml                                   the demo scenario
    README.txt                                   how it was made (voices, espeak-ng lines, sizes)

Clips are named ``<event>_<voice>[_<voicename>]_<line>.dat`` with the real living-world voice ids
and type bits (spec 1.4); the event table is bank 1 with the real event ids and names (0x2000 + n).
One record per clip: weight code 0x39, probability 100, field values = (type bit, variant bit,
near/far or zombie word as the event's request words say). The guard's 102_Radio record is a
sequence of three clips (chirp, line, chirp). Every clip header has history length = take count.

Lines are synthesised ONCE with espeak-ng (a voice per ped, a wording or delivery per take),
trimmed, resampled 22,050 -> 36,000 Hz (scipy ``resample_poly``), and stored as EA SNR/SNS takes
with codec 3 (EA-XMA2: barkbus's own XMA2 encoder at 64 kbit/s, packets in SNS blocks), mono 36 kHz
like the retail living-world takes, so the demo runs through the game's codec and FFmpeg's XMA2
decoder. The encoder is deterministic, so the build gives the same bytes on every run. The radio
chirps are a synthesised two-tone beep plus a band-passed noise burst. The ``.hdr``/``.sth``/``.evt`` entries
and the nested archives are RefPack-compressed (``--compression``); the ``.dat`` clips are stored.

Not the game's data: the voice variant bits (``1 << (n - 1)`` for the digit in the voice name; 2
for the generic voice 53), the ``.hdr`` ids (1.. in clip-name order), the events' queue timeouts
and priorities are demo choices. The build is reproducible: the same bytes on every run for a
given espeak-ng (whose output may differ between versions; the generated files are committed and
nothing here is needed at render time).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from speech_synth import speak

from audio.codecs.pcm import encode_pcm16be
from audio.codecs.xas1 import encode_xas1
from audio.codecs.xma2_encoder import encode_xma2
from audio.containers.snr import CODEC_PCM16BE, CODEC_XAS1, TYPE_STREAM, SnrHeader, eaxma_take
from audio.containers.sns import write_blocks
from audio.games.skate.formats.big import COMPRESSIONS
from audio.games.skate.formats.evt import ClipRef, EvtEvent, EvtRecord, EvtTable, event_id
from audio.games.skate.formats.hdr import ClipHeader
from audio.games.skate.formats.install import SPEECH_DIR, bank_paths, write_install

__all__ = [
    "SAMPLE_RATE",
    "BANK",
    "TAKE_PEAK",
    "VOICES",
    "EVENTS",
    "RADIO_SEQUENCE",
    "SCENARIO",
    "Voice",
    "EventDef",
    "ClipDef",
    "clip_defs",
    "build_evt",
    "synthesize",
    "radio_chirp",
    "encode_take",
    "build",
    "main",
]

SAMPLE_RATE = 36_000
"""Take sample rate (Hz), like the retail living-world takes."""
XMA2_KBPS = 64.0
"""Bitrate of the demo's EA-XMA2 takes, kbit/s (Microsoft's own banks run at 63-87)."""
BANK = 1
"""The living-world bank number (event ids 0x2000 + n)."""
OUT = ROOT / "audio" / "games" / "skate" / "demo"
TAKE_PEAK = 0.5
"""Take peak level (linear, -6 dBFS): near the retail takes (a busm1 warn take peaks at -9 dBFS)."""
WEIGHT_CODE = 0x39  # 4 x 25, every living-world record
RECORD_PROBABILITY = 100
_TAKE_PITCH = (0, 6, -5, 3)  # espeak-ng -p offset per take (delivery)
_TAKE_SPEED = (0, 12, -8, 6)  # espeak-ng -s offset per take (words per minute)


@dataclass(frozen=True)
class Voice:
    """One ped voice: its real id and type bit, our variant bit, and how espeak-ng speaks it."""

    name: str | None  # voice name in the clip names (None: a generic voice, e.g. 53)
    id: int
    type_bit: int
    variant_bit: int
    role: str
    espeak: str  # espeak-ng -v
    pitch: int  # espeak-ng -p (0..99)
    speed: int  # espeak-ng -s (words per minute)
    lines: dict[str, tuple[str, ...]]  # clip line ("501/Warn_n") -> one text per take

    @property
    def tag(self) -> str:
        return f"{self.id}_{self.name}" if self.name else str(self.id)


@dataclass(frozen=True)
class EventDef:
    """An event of the table: n (id = 0x2000 + n), its real name, request words, demo timing."""

    n: int
    name: str
    words: tuple[int, ...]  # block words the request carries (spec 2.4), e.g. (0, 1, 2)
    timeout: int = 90  # queue timeout, console frames (demo value)
    priority: int = 520  # .evt priority 500-550 (demo value; the player uses the tuning's)

    @property
    def id(self) -> int:
        return event_id(BANK, self.n)

    @property
    def number(self) -> int:
        """The number in the clip names (501 for ``501_warn``)."""
        return int(self.name.split("_", 1)[0])


_NF, _ZB = (0, 1, 2), (0, 1, 9)
EVENTS: tuple[EventDef, ...] = (
    EventDef(2, "603_Chase_Start", (0, 1, 2, 9), 120, 545),
    EventDef(3, "604_hot_pursuit", (0, 1), 120, 540),
    EventDef(4, "605_chase_terminate", (0, 1), 120, 530),
    EventDef(5, "606_catch", _ZB, 90, 540),
    EventDef(6, "607_chase_join", (0, 1), 120, 535),
    EventDef(7, "609_lunge", _ZB, 60, 540),
    EventDef(9, "611_cool_down", (0, 1), 150, 510),
    EventDef(10, "101_pos", _NF, 90, 515),
    EventDef(12, "104_spec_slam", _NF, 90, 530),
    EventDef(14, "201_grunt", _ZB, 60, 525),
    EventDef(15, "202_impact_react", _NF, 60, 535),
    EventDef(16, "204_gasp", (0, 1), 60, 525),
    EventDef(17, "205_spec_collision", (0, 1), 90, 525),
    EventDef(18, "501_warn", _NF, 60, 550),
    EventDef(19, "805_conv_cell", (0, 1), 180, 500),
    EventDef(20, "806_cls_interact", (0, 1, 3), 180, 505),
    EventDef(21, "807_cls_react", (0, 1, 3), 180, 505),
    EventDef(22, "1901_shout", _ZB, 180, 500),
    EventDef(23, "4402_cell_greet", (0, 1), 180, 500),
    EventDef(24, "4405_cell_bye", (0, 1), 180, 500),
    EventDef(25, "109_help", (0, 1), 90, 530),
    EventDef(28, "203_concern", _NF, 90, 520),
    EventDef(32, "108_flee", (0, 1), 90, 530),
    EventDef(55, "206_pan_handle", (0, 1), 180, 500),
    EventDef(56, "207_random_bum", (0, 1), 180, 500),
    EventDef(77, "550_Intro_Short", (0, 1, 4), 180, 505),
    EventDef(78, "556_Answer", (0, 1, 4), 180, 505),
    EventDef(79, "551_Intro_Question", (0, 1, 4), 180, 505),
    EventDef(80, "552_Intro_Statement", (0, 1, 4), 180, 505),
    EventDef(81, "553_Opinion", (0, 1, 4), 180, 505),
    EventDef(82, "554_Statement", (0, 1, 4), 180, 505),
    EventDef(83, "555_Question", (0, 1, 4), 180, 505),
    EventDef(84, "557_Outro", (0, 1, 4), 180, 505),
    EventDef(85, "102_Radio", (0, 1), 180, 500),
    EventDef(106, "330_TzerStart", (0, 1), 90, 540),
    EventDef(107, "331_TzerDone", (0, 1), 90, 540),
)
"""The living-world events of the demo table with their real ids and names (spec 2.3); events the
demo gives no clips to have no records (the library answers NoRecord, like the retail data's gaps)."""
_BY_NUMBER = {e.number: e for e in EVENTS}

RADIO_SEQUENCE = ("Radio_chirp_in", "Radio", "Radio_chirp_out")
"""The guard radio record's clips, played in this order (102_Radio)."""
_CHIRP = {"Radio_chirp_in": 2, "Radio_chirp_out": 2}  # synthesised clips: line -> take count

VOICES: tuple[Voice, ...] = (
    Voice(
        "busm1",
        59,
        0x1000,
        1,
        "business man",
        "en-us+m3",
        38,
        180,
        {
            "501/Warn_n": (
                "Hey! Watch it!",
                "Watch where you're going!",
                "Do you mind? This suit cost more than your board.",
            ),
            "501/Warn_f": ("Hey! Slow down over there!", "Watch it, you hooligan!"),
            "104/Slam_n": (
                "Ooh, that had to hurt.",
                "Serves you right.",
                "Somebody call an ambulance. Or don't.",
            ),
            "101/SpecPos_n": ("Huh. Not bad, kid.", "Impressive. Now get a job."),
            "205/SpecCol": ("Whoa! Everyone all right?", "Good grief!"),
            "202/HImpRct": ("Oof!", "Ugh, my coffee!"),
            "1901/Shout": ("Taxi!", "I'm on the phone here!"),
        },
    ),
    Voice(
        "adtf2",
        47,
        0x2,
        2,
        "adult woman",
        "en-gb+f2",
        58,
        180,
        {
            "501/Warn_n": ("Oi! Careful!", "Mind where you're going!", "Honestly, kids these days."),
            "501/Warn_f": ("Careful over there!", "Oi! Slow down!"),
            "104/Slam_n": ("Oh my goodness!", "Oh, that looked painful.", "Are you all right, love?"),
            "104/Slam_f": ("Ooh, nasty fall!", "Did he just fall over?"),
            "101/SpecPos_n": ("Oh, that was lovely!", "Brilliant!"),
            "205/SpecCol": ("Oh no!", "Goodness me!"),
            "203/Concern_n": ("Are you hurt, dear?", "Someone help him up."),
            "108/ChsFlee": ("Get away from me!", "I'm leaving!"),
            "1901/Shout": ("Yoo-hoo! Over here!", "Hello there!"),
        },
    ),
    Voice(
        "secg1",
        75,
        0x40,
        1,
        "security guard",
        "en-us+m7",
        30,
        175,
        {
            "501/Warn_n": ("Hey! No skating here!", "Step off the board, pal.", "Watch it, buddy!"),
            "501/Warn_f": ("Hey you! No skateboarding!", "Off the board, now!"),
            "104/Slam_n": ("Ha! That's what you get.", "Told you. Dangerous."),
            "205/SpecCol": ("Everybody stay back!", "Nobody move!"),
            "603/Chase_Start": ("Hey! Stop right there!", "You! Freeze!", "Get back here!"),
            "607/ChsJoin": ("I'm on him!", "Coming through! Security!"),
            "102/Radio": (
                "Dispatch, I've got a skater in the plaza.",
                "Copy that, moving in.",
                "Suspect on a board, heading north.",
            ),
            "1901/Shout": ("Move along, people!", "Keep it moving!"),
        },
    ),
    Voice(
        "tenm1",
        69,
        0x20,
        1,
        "teen boy",
        "en-us+m1",
        70,
        205,
        {
            "501/Warn_n": ("Dude! Watch it!", "Whoa, watch it, man!", "Seriously, dude?"),
            "501/Warn_f": ("Dude, watch out!", "Hey, watch it, man!"),
            "104/Slam_n": ("Oh! Dude! Bail!", "Ha ha, epic fail!", "Oh man, that's gotta hurt!"),
            "104/Slam_f": ("Yo, did you see that bail?", "Oh, he ate it!"),
            "101/SpecPos_n": ("Sick!", "Dude, that was rad!"),
            "205/SpecCol": ("Whoa!", "Oh snap!"),
            "203/Concern_n": ("You okay, man?", "Dude, you alright?"),
            "1901/Shout": ("Yo!", "Hey, wait up!"),
        },
    ),
    Voice(
        "grn1",
        51,
        0x4,
        1,
        "granny",
        "en+f4",
        75,
        150,
        {
            "501/Warn_n": ("Watch it, young man!", "Oh, you nearly knocked me over!", "Careful, kid!"),
            "501/Warn_f": ("Slow down, young man!", "You'll break your neck!"),
            "104/Slam_n": ("Oh dear, oh dear!", "I told you so!", "Goodness gracious!"),
            "104/Slam_f": ("Oh my, he fell down!", "Somebody help that boy!"),
            "101/SpecPos_n": ("Oh, how clever!", "My, my, very nice!"),
            "205/SpecCol": ("Oh, heavens!", "Good lord!"),
            "203/Concern_n": ("Are you hurt, sweetie?", "Oh, you poor thing."),
            "108/ChsFlee": ("Oh, I'm going home!", "Not today, thank you!"),
            "1901/Shout": ("Harold! Harold!", "Where are my glasses?"),
        },
    ),
    Voice(
        "sktm1",
        89,
        0x200,
        1,
        "skater",
        "en-us+m2",
        55,
        210,
        {
            "501/Warn_n": ("Watch it, bro!", "Hey, that's my line, man!", "Whoa, heads up!"),
            "501/Warn_f": ("Heads up over there!", "Yo, clear the line!"),
            "104/Slam_n": ("Ooh, slam!", "Shake it off, bro!", "Hardcore!"),
            "101/SpecPos_n": ("Yeah! Stomped it!", "Sick trick, bro!"),
            "205/SpecCol": ("Whoa, yard sale!", "Oh, dude!"),
            "203/Concern_n": ("You good, bro?", "Walk it off, man."),
            "108/ChsFlee": ("Security! Scatter!", "Later!"),
            "1901/Shout": ("Let's session!", "Yo, over here!"),
        },
    ),
    Voice(
        "bum1",
        87,
        0x4000,
        1,
        "bum",
        "en-gb-scotland+croak",
        25,
        155,
        {
            "501/Warn_n": ("Hey! Watch it, pal!", "Careful, I'm walking here!", "Hey, you spilled my drink!"),
            "501/Warn_f": ("Hey! Watch it!", "Slow down, ya punk!"),
            "104/Slam_n": ("Ha! Ha! Ha!", "Been there, buddy.", "That's gotta sting."),
            "101/SpecPos_n": ("Not bad, not bad.", "Do it again!"),
            "205/SpecCol": ("Whoa there!", "Heh, nice one."),
            "108/ChsFlee": ("I didn't do nothing!", "I'm going, I'm going!"),
            "109/Help": ("Help! Help!", "They're after me!"),
            "1901/Shout": ("Hey buddy!", "Nice day, huh?"),
            "206/PanHandle": ("Spare a dollar, friend?", "Got any change?"),
            "207/Ramble": ("The pigeons know everything.", "Back in my day we had real wheels."),
        },
    ),
    Voice(
        None,
        53,
        0x100,
        2,
        "tourist woman (generic voice, unnamed clips)",
        "en-us+f3",
        62,
        175,
        {
            "501/Warn_n": ("Excuse me!", "Hey, careful!"),
            "501/Warn_f": ("Watch out!", "Careful over there!"),
            "104/Slam_n": ("Oh no!", "Is he okay?"),
            "101/SpecPos_n": ("Wow! Can I take a picture?", "Amazing!"),
            "1901/Shout": ("Look at this plaza!", "Honey, over here!"),
        },
    ),
)
"""The demo's voices (real ids and type bits, spec 1.4) and their lines (one text per take)."""


@dataclass(frozen=True)
class ClipDef:
    """One clip to write: its name, event, voice, line and takes' (text, espeak args) or chirp."""

    name: str  # stem, e.g. "501_59_busm1_Warn_n"
    event: EventDef
    voice: Voice
    line: str
    texts: tuple[str, ...]  # one per take ("" for synthesised chirps)

    @property
    def near_far(self) -> int:
        """Field-3 mask of a near/far event: 2 near (``_n``), 1 far (``_f``), 0 any."""
        return 2 if self.line.endswith("_n") else 1 if self.line.endswith("_f") else 0

    @property
    def far(self) -> bool:
        return self.line.endswith("_f")

    def espeak_args(self, take: int) -> list[str]:
        """The espeak-ng arguments of one take (without ``-w`` and the text)."""
        v = self.voice
        pitch = v.pitch + _TAKE_PITCH[take % 4] + (8 if self.far else 0)
        speed = v.speed + _TAKE_SPEED[take % 4] - (10 if self.far else 0)
        args = ["-v", v.espeak, "-p", str(max(0, min(99, pitch))), "-s", str(speed)]
        return args + (["-a", "180"] if self.far else [])


def clip_defs(voices: tuple[Voice, ...] = VOICES) -> list[ClipDef]:
    """Every clip of the demo, sorted by name (the guard's radio chirps added next to its line)."""
    out = []
    for v in voices:
        for key, texts in v.lines.items():
            number, line = key.split("/")
            ev = _BY_NUMBER[int(number)]
            out.append(ClipDef(f"{number}_{v.tag}_{line}", ev, v, line, texts))
            if line == "Radio":
                for chirp, n in _CHIRP.items():
                    out.append(ClipDef(f"{number}_{v.tag}_{chirp}", ev, v, chirp, ("",) * n))
    return sorted(out, key=lambda c: c.name)


def _values(ev: EventDef, clips: list[ClipDef]) -> tuple[int, ...]:
    """A record's field masks: type bit, variant bit, then near/far (w2), zombie (w9: 1 = normal)."""
    c = clips[0]
    out = []
    for w in ev.words:
        out.append({0: c.voice.type_bit, 1: c.voice.variant_bit, 2: c.near_far, 9: 1}.get(w, 0))
    return tuple(out)


def build_evt(clips: list[ClipDef], ids: dict[str, int]) -> EvtTable:
    """The bank-1 event table: one record per clip, the radio clips as one 3-clip sequence record."""
    events = []
    for ev in EVENTS:
        mine = [c for c in clips if c.event is ev]
        groups: list[list[ClipDef]] = []
        for c in mine:
            if c.line in RADIO_SEQUENCE:
                if c.line == "Radio":
                    by_line = {x.line: x for x in mine if x.voice is c.voice}
                    groups.append([by_line[s] for s in RADIO_SEQUENCE if s in by_line])
            else:
                groups.append([c])
        records = tuple(
            EvtRecord(
                weight_code=WEIGHT_CODE,
                probability=RECORD_PROBABILITY,
                mode=0,
                locals=0,
                values=_values(ev, g),
                clips=tuple(ClipRef(ids[c.name]) for c in g),
            )
            for g in groups
        )
        fields = tuple(range(1, len(ev.words) + 1))  # field k reads request word k
        events.append(
            EvtEvent(
                id=ev.id,
                timeout=ev.timeout,
                priority=ev.priority,
                flags=0,
                probability=100,
                flags2=0,
                byte11=0,
                fields=fields,
                records=records,
                name=ev.name,
            )
        )
    return EvtTable(bank=BANK, sub_bank=0, events=events)


# -- audio -------------------------------------------------------------------------------------
def _finish(y: np.ndarray) -> np.ndarray:
    """Peak-normalise with a gentle tanh saturation to :data:`TAKE_PEAK`, as int16."""
    y = np.tanh(2.0 * y / max(1e-9, float(np.max(np.abs(y))))) / np.tanh(2.0) * TAKE_PEAK
    return np.round(y * 32767.0).astype(np.int16)


def _bandpass(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    from scipy.signal import butter, sosfilt

    return sosfilt(butter(4, [lo, hi], btype="bandpass", fs=SAMPLE_RATE, output="sos"), x)


def synthesize(text: str, args: list[str], workdir: Path, radio: bool = False) -> np.ndarray:
    """espeak-ng -> trimmed, 36 kHz int16 mono (``radio``: band-limited, driven, a little hiss)."""
    y = speak(text, args, workdir, SAMPLE_RATE)
    if radio:
        y = np.tanh(4.0 * _bandpass(y, 350.0, 3200.0) / max(1e-9, float(np.max(np.abs(y)))))
        y = y + 0.02 * _bandpass(np.random.default_rng(75).standard_normal(y.size), 500.0, 5000.0)
    return _finish(y)


def radio_chirp(line: str, take: int) -> np.ndarray:
    """A walkie-talkie chirp: two 70 ms tones and a 120 ms band-passed noise burst (``_out``: reversed)."""
    t = np.arange(int(0.07 * SAMPLE_RATE)) / SAMPLE_RATE
    fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.005)
    f1, f2 = ((1850.0, 2450.0), (2100.0, 1600.0))[take % 2]
    beeps = np.concatenate([np.sin(2 * np.pi * f * t) * fade * 0.5 for f in (f1, f2)])
    n = int(0.12 * SAMPLE_RATE)
    rng = np.random.default_rng(1000 * (line == "Radio_chirp_out") + take)
    decay = np.exp(-np.arange(n) / (0.05 * SAMPLE_RATE))
    burst = _bandpass(rng.standard_normal(n), 600.0, 3800.0) * decay * 0.35
    gap = np.zeros(int(0.02 * SAMPLE_RATE))
    parts = [beeps, gap, burst] if line == "Radio_chirp_in" else [burst, gap, beeps[::-1]]
    y = np.concatenate(parts)
    return _finish(y)


def encode_take(pcm: np.ndarray, codec: str) -> tuple[bytes, bytes]:
    """(8-byte SNR header, SNS body) of a mono 36 kHz int16 take: codec "eaxma" (3, the game's:
    XMA2 at :data:`XMA2_KBPS` kbit/s), "xas1" (4) or "pcm16be" (2)."""
    if codec == "eaxma":
        enc = encode_xma2(pcm.astype(np.float32) / np.float32(32768.0), SAMPLE_RATE, bitrate=XMA2_KBPS)
        return eaxma_take(enc.streams, 1, SAMPLE_RATE, int(pcm.size))
    number = CODEC_XAS1 if codec == "xas1" else CODEC_PCM16BE
    body = write_blocks(encode_xas1(pcm)) if codec == "xas1" else write_blocks(encode_pcm16be(pcm))
    head = SnrHeader(
        version=0,
        codec=number,
        channels=1,
        sample_rate=SAMPLE_RATE,
        type=TYPE_STREAM,
        loop=False,
        num_samples=int(pcm.size),
    ).pack()
    return head, body


# -- the install ---------------------------------------------------------------------------------
SCENARIO = """# Skate 3 living-world speech demo: a skater (the listener / camera) rolls through a plaza.
# Built by tools/build_skate_demo.py together with the install beside it (install = "."); the
# tuning is the [skate] default, barkbus's demo tuning audio/games/skate/demo/tuning.toml (NOT the
# game's values). Render:
#   python -m audio render audio/games/skate/demo/plaza.toml -o plaza.wav --log plaza.jsonl
#       --timeline plaza.png
#
# Speech values (spec 2.2/2.3): 53/54 warn -> 501_warn (the near line within 20 m, the far line
# beyond), 25 slam reaction -> 104_spec_slam, 23 trick cheer -> 101_pos, 10 collision nearby ->
# 203_concern / 205_spec_collision (coin flip), 14 join chase -> 603_Chase_Start / 607_chase_join,
# 1/3 guard -> 102_Radio (chirp, line, chirp), 20 flee -> 108_flee / 109_help, 2 idle -> 1901_shout.
# A ped acts only when its value changes, and a new value stops its playing line. The gate's
# timers start at 0 (spec 2.5), so nothing passes an event's repeat time in the first seconds.

[scenario]
name = "plaza"
duration = 29.5
seed = 7

[listener]
yaw = 0.0
path = [
  { t = 0.0, position = [0.0, 1.2, -8.0] },
  { t = 7.0, position = [0.6, 1.2, 7.5] },
  { t = 12.5, position = [0.0, 1.2, 19.0] },
  { t = 14.0, position = [0.0, 1.2, 19.3] },
  { t = 17.0, position = [-0.5, 1.2, 27.0] },
  { t = 22.0, position = [1.0, 1.2, 42.0] },
  { t = 28.0, position = [0.0, 1.2, 62.0] },
]

[skate]
install = "."                     # the install beside this file
# tuning = "tuning.toml"              # the default: audio/games/skate/demo/tuning.toml
streams_per_channel = 2           # the port's reading: 2 living-world streams
console_start = 10.0              # the console has run 10 s when the plaza starts (lines from t = 0)

# -- the player's speed (m/s; 101_pos needs more than 5 km/h in the demo tuning) -----------------
[[event]]
t = 0.0
type = "skate.speed"
speed = 2.2

[[event]]                         # the bail: the skater lies on the ground
t = 12.5
type = "skate.speed"
speed = 0.0

[[event]]
t = 14.0
type = "skate.speed"
speed = 2.6

[[event]]                         # pushing away from the guard
t = 18.7
type = "skate.speed"
speed = 3.5

# -- peds ----------------------------------------------------------------------------------------
[[event]]                         # the business man the skater bumps into
t = 0.0
type = "skate.spawn"
ped = 1
voice = "busm1"
path = [[0.0, 1.8, 1.7, 14.0], [7.0, 1.4, 1.7, 8.6], [16.0, 1.0, 1.7, 0.0]]

[[event]]                         # the crowd at the slam spot (z = 19)
t = 0.0
type = "skate.spawn"
ped = 2
voice = "adtf2"
position = [-3.0, 1.7, 21.0]

[[event]]
t = 0.0
type = "skate.spawn"
ped = 3
voice = "tenm1"
position = [3.5, 1.7, 18.0]

[[event]]                         # a second teen with the same voice: same speaker slot, shared timers
t = 0.0
type = "skate.spawn"
ped = 9
voice = "tenm1"
position = [4.5, 1.7, 22.5]

[[event]]                         # a granny, beyond 20 m at the slam, then walking closer
t = 0.0
type = "skate.spawn"
ped = 4
voice = "grn1"
path = [[0.0, -15.0, 1.7, 37.0], [12.5, -14.0, 1.7, 36.0], [22.0, -3.0, 1.7, 29.0]]

[[event]]
t = 0.0
type = "skate.spawn"
ped = 5
voice = "sktm1"
position = [5.0, 1.7, 28.0]

[[event]]                         # the security guard, far ahead at first
t = 0.0
type = "skate.spawn"
ped = 6
voice = "secg1"
path = [[0.0, 10.0, 1.7, 45.0], [17.0, 6.0, 1.7, 36.0], [19.0, 3.0, 1.7, 32.0], [28.0, 1.5, 1.7, 57.0]]

[[event]]                         # a bum on a bench
t = 0.0
type = "skate.spawn"
ped = 7
voice = "bum1"
position = [-4.0, 1.7, 40.0]

[[event]]                         # a tourist across the plaza (generic voice 53: no name in its clips)
t = 0.0
type = "skate.spawn"
ped = 8
voice = 53
position = [-26.0, 1.7, 50.0]

# -- at once: a warn from the crowd, then the same ped again too soon (Repeat) --------------------
[[event]]
t = 0.2
type = "skate.value"
ped = 8
value = 53

[[event]]
t = 1.5
type = "skate.value"
ped = 8
value = 54

# -- the guard's radio, far away --------------------------------------------------------------
[[event]]
t = 9.0
type = "skate.value"
ped = 6
value = 3

# -- the bump: a near warn, then a second bump the gate refuses (Repeat) --------------------------
[[event]]
t = 7.0
type = "skate.value"
ped = 1
value = 53

[[event]]
t = 10.4
type = "skate.value"
ped = 1
value = 54

# -- the slam near the crowd (two streams: the rest queue, some expire) ------------------------------
[[event]]
t = 12.5
type = "skate.value"
ped = 2
value = 25

[[event]]
t = 12.5
type = "skate.value"
ped = 3
value = 25

[[event]]
t = 12.5
type = "skate.value"
ped = 4
value = 25

[[event]]
t = 12.6
type = "skate.value"
ped = 5
value = 10

[[event]]                         # the second teen cheers right after: same speaker, Gap
t = 12.8
type = "skate.value"
ped = 9
value = 23

# -- tricks near peds ---------------------------------------------------------------------------------
[[event]]
t = 15.5
type = "skate.value"
ped = 5
value = 23

[[event]]
t = 16.3
type = "skate.value"
ped = 4
value = 23

[[event]]
t = 16.6
type = "skate.value"
ped = 2
value = 23

# -- the chase ----------------------------------------------------------------------------------------
[[event]]
t = 18.5
type = "skate.value"
ped = 6
value = 14

[[event]]                         # the bum flees the commotion
t = 20.5
type = "skate.value"
ped = 7
value = 20

[[event]]                         # the guard radios it in
t = 22.0
type = "skate.value"
ped = 6
value = 1

# -- somebody far away warns (beyond 20 m: the far line) ---------------------------------------------
[[event]]
t = 24.0
type = "skate.value"
ped = 8
value = 53

[[event]]                         # the guard radios again: Repeat
t = 25.5
type = "skate.value"
ped = 6
value = 3

[[event]]                         # the second teen, now far behind, shouts
t = 26.0
type = "skate.value"
ped = 9
value = 2
"""


def _readme(
    clips: list[ClipDef], compression: str, codec: str, sizes: dict[str, int], takes: int, espeak_version: str
) -> str:
    lines = [
        "Skate 3 living-world speech demo install (barkbus)",
        "",
        "Made by tools/build_skate_demo.py (python tools/build_skate_demo.py --out audio/games/skate/demo).",
        "It is not game data: every line was synthesised with espeak-ng and written with barkbus's own",
        "writers in the game's layout (data/audio/english/livingworldspeech.big, EB v3, holding the .dat",
        "clips, livingworld_Events.evt and the nested livingworldhdr.big / livingworldsth.big).",
        f"espeak-ng: {espeak_version}",
        "Audio: trimmed, resampled 22,050 -> 36,000 Hz (scipy resample_poly), tanh-normalised to a -6 dBFS",
        "peak (the retail busm1 warn take peaks at -9 dBFS), stored as",
        "EA SNR/SNS takes, codec "
        + {"eaxma": f"3 EA-XMA2 (barkbus's XMA2 encoder, {XMA2_KBPS:g} kbit/s)", "xas1": "4 XAS1"}.get(
            codec, "2 PCM16BE"
        )
        + ", mono, 36,000 Hz.",
        f"Archive compression of the .hdr/.sth/.evt entries and the nested archives: {compression};",
        "the .dat clips are stored.",
        "Radio chirps (102_*_Radio_chirp_in/out): a synthesised two-tone beep and a band-passed noise burst;",
        "the radio line itself is band-limited (350-3,200 Hz) and driven.",
        "Records: one per clip (weight code 0x39, probability 100); 102_Radio is one record of three clips",
        "(chirp in, line, chirp out). Field values: type bit, variant bit, then near/far (2 near `_n`,",
        "1 far `_f`, 0 any) or the zombie word (1 = normal) as the event's request words say.",
        "Demo choices (NOT the game's): variant bits (1 << (n-1) for the voice name's digit; 2 for",
        "voice 53),",
        ".hdr ids (1.. in clip-name order), queue timeouts and .evt priorities.",
        "Delivery per take k: espeak-ng pitch + (0, 6, -5, 3)[k], speed + (0, 12, -8, 6)[k]; far lines (_f)",
        "also pitch +8, speed -10, amplitude 180.",
        "",
        f"Files ({sum(sizes.values())} bytes, {len(clips)} clips, {takes} takes):",
    ]
    lines += [f"  {size:>9}  {name}" for name, size in sorted(sizes.items())]
    lines += ["", "Voices (id, name, type bit, variant bit, role, espeak-ng voice / pitch / speed):"]
    for v in VOICES:
        lines.append(
            f"  {v.id:>3}  {v.name or '-':<6} 0x{v.type_bit:04X}  {v.variant_bit:>2}  {v.role}  "
            f"[-v {v.espeak} -p {v.pitch} -s {v.speed}]"
        )
    lines += ["", "Events (id, name, records):"]
    for ev in EVENTS:
        n = sum(1 for c in clips if c.event is ev and c.line not in _CHIRP)
        lines.append(f"  {ev.id} 0x{ev.id:04X}  {ev.name:<20} {n}")
    lines += ["", "Takes (clip, take, espeak-ng arguments, text):"]
    for c in clips:
        for k, text in enumerate(c.texts):
            what = "(synthesised chirp)" if not text else f'{" ".join(c.espeak_args(k))}  "{text}"'
            lines.append(f"  {c.name}#{k}  {what}")
    return "\n".join(lines) + "\n"


def build(
    out: Path, *, voices: int | None = None, compression: str = "refpack", codec: str = "eaxma"
) -> dict:
    """Build the install, plaza.toml and README.txt into ``out``; returns a summary dict.

    ``voices`` keeps only the first N voices (a quick reduced build); ``out/data`` is replaced.
    """
    if shutil.which("espeak-ng") is None:
        raise SystemExit("espeak-ng is needed to synthesise the demo lines (apt-get install espeak-ng)")
    chosen = VOICES[:voices] if voices else VOICES
    clips = clip_defs(chosen)
    ids = {c.name: k + 1 for k, c in enumerate(clips)}
    specs = []
    takes = 0
    with tempfile.TemporaryDirectory() as tmp:
        for c in clips:
            encoded = []
            for k, text in enumerate(c.texts):
                pcm = (
                    radio_chirp(c.line, k)
                    if c.line in _CHIRP
                    else synthesize(text, c.espeak_args(k), Path(tmp), radio=c.line == "Radio")
                )
                encoded.append(encode_take(pcm, codec))
            takes += len(encoded)
            specs.append((c.name, ClipHeader.new(ids[c.name], len(encoded)), encoded))
    if (out / "data").exists():
        shutil.rmtree(out / "data")
    out.mkdir(parents=True, exist_ok=True)
    big = write_install(out, "livingworld", specs, build_evt(clips, ids), compression=compression)
    (out / "plaza.toml").write_text(SCENARIO, encoding="utf-8")
    version = subprocess.run(
        ["espeak-ng", "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    sizes = {str(big.relative_to(out)): big.stat().st_size, "plaza.toml": (out / "plaza.toml").stat().st_size}
    readme = _readme(clips, compression, codec, sizes, takes, version)
    (out / "README.txt").write_text(readme, encoding="utf-8")
    return {
        "speech_big": big,
        "bytes": big.stat().st_size,
        "clips": len(clips),
        "takes": takes,
        "voices": len(chosen),
        "events": len(EVENTS),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Writes OUT/data/... (replaced), OUT/plaza.toml and OUT/README.txt. "
        "Needs espeak-ng on PATH. The same bytes on every run.",
    )
    ap.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    ap.add_argument(
        "--voices",
        type=int,
        default=None,
        metavar="N",
        help=f"only the first N of the {len(VOICES)} voices (a quick reduced build)",
    )
    ap.add_argument(
        "--compression",
        default="refpack",
        choices=sorted(COMPRESSIONS),
        help="compression of the .hdr/.sth/.evt entries and nested archives (default refpack)",
    )
    ap.add_argument(
        "--codec",
        default="eaxma",
        choices=("eaxma", "xas1", "pcm16be"),
        help="take codec: eaxma (EA codec 3, XMA2, the game's; default), xas1 (codec 4) or pcm16be (codec 2)",
    )
    args = ap.parse_args(argv)
    if args.voices is not None and not 1 <= args.voices <= len(VOICES):
        ap.error(f"--voices must be 1..{len(VOICES)}")
    s = build(args.out, voices=args.voices, compression=args.compression, codec=args.codec)
    print(f"{s['bytes']:>9} bytes  {s['speech_big']}")
    print(
        f"{s['voices']} voices, {s['clips']} clips, {s['takes']} takes, {s['events']} events "
        f"({SPEECH_DIR / bank_paths('livingworld')['speech']})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
