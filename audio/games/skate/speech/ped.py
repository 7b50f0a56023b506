"""The ped side of speech (retail ``SFXObj_PedestrianSpeech``, spec 2.1).

:class:`PedSpeech` runs once per console frame per ped. It acts only when the ped's
speech value changes (the first value is compared with the constructor's 68):

* 49 (phone) is not a request: it starts the phone ring; when the ring ends the ped
  requests 64 (``4402_cell_greet``). The ring's length is a setting (default 1.0 s; the
  game plays a ``CellPhone_Rings`` container whose recorded rings last 0.84-1.13 s);
* 7 / 8 become 30 after a 29, else 51;
* 29 (photographer) repeats every 1.0 s while the system's photographer flag is set.

The request block (:meth:`PedSpeech.block`) holds w0..w9 (regular) or w0..w13 (main cast).
The near/far flag is 1 (far) beyond the model's threshold (20 m regular, 30 m pros), else
2; the main cast uses the opposite sense (1 near, 2 far).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "PedModel",
    "PedSpeech",
    "PedFrame",
    "VOICE_TYPES",
    "FEMALE_TYPES",
    "far_threshold_for",
    "voice_type_bit",
    "PHOTO_REPEAT_SECONDS",
    "DEFAULT_PHONE_RING_SECONDS",
    "INITIAL_VALUE",
]

PHOTO_REPEAT_SECONDS = 1.0
DEFAULT_PHONE_RING_SECONDS = 1.0
INITIAL_VALUE = 68
"""The previous value a new ped starts with (the retail constructor's)."""

VOICE_TYPES: dict[int, int] = {}
"""Voice id -> living-world speaker type bit (spec 1.4)."""
for _bit, _voices in (
    (0x1, (41, 42, 43)),
    (0x2, (46, 47, 49)),
    (0x4, (51, 52)),
    (0x8, (55, 56)),
    (0x10, (72, 73, 74)),
    (0x20, (69, 70, 71)),
    (0x40, (75, 76, 77)),
    (0x80, (82, 83, 84)),
    (0x100, (85, 53)),
    (0x200, (89, 91, 92, 90)),
    (0x400, (94, 95, 96, 93)),
    (0x1000, (59, 60, 61)),
    (0x2000, (64, 65, 66)),
    (0x4000, (87, 88, 86)),
):
    for _v in _voices:
        VOICE_TYPES[_v] = _bit

FEMALE_TYPES = 0x2 | 0x4 | 0x10 | 0x100 | 0x400 | 0x2000
"""Type bits of female speakers (block word w5 = 1 for these, 2 otherwise)."""


def voice_type_bit(voice_id: int) -> int:
    """The type bit of a voice id (0 if the voice is not a living-world voice)."""
    return VOICE_TYPES.get(voice_id, 0)


def far_threshold_for(kind: str) -> float:
    """Default near/far threshold in metres: 30 for pros, 20 for everyone else."""
    return 30.0 if kind == "pro" else 20.0


@dataclass(frozen=True)
class PedModel:
    """What the speech code reads of a ped's model.

    ``kind`` is "regular", "security", "bum" or "pro" (pros take the main-cast path).
    ``variant_bit`` 1/2/4/8/16; ``partner_type`` the conversation partner's type bit (w3);
    ``conversation`` n (w4 = 1 << (n-1), 0 = none); for pros ``cast_bit`` / ``cast_word``
    (w0 / w1) and the other skater's ``other_cast_bit`` / ``other_cast_word`` (w4 / w5).
    """

    voice_id: int
    kind: str = "regular"
    type_bit: int = 0
    variant_bit: int = 1
    partner_type: int = 0
    conversation: int = 0
    female: bool = False
    far_threshold: float = 20.0
    voice_float: float = 1.0
    pitch: int = 4096
    cast_bit: int = 0
    cast_word: int = 0
    other_cast_bit: int = 0
    other_cast_word: int = 0

    @property
    def maincast(self) -> bool:
        return self.kind == "pro" or (self.type_bit == 0 and self.cast_bit != 0)


@dataclass(frozen=True)
class PedFrame:
    """What one frame of :class:`PedSpeech` asks for.

    ``stop_line``: the value changed, so the ped's playing line stops (spec 4);
    ``values``: speech values to request now; ``ring_started`` / ``ring_ended``: the phone.
    """

    stop_line: bool = False
    values: tuple[int, ...] = ()
    ring_started: bool = False
    ring_ended: bool = False


@dataclass
class PedSpeech:
    """Per-ped speech state, advanced once per console frame by :meth:`frame`."""

    model: PedModel
    phone_ring_seconds: float = DEFAULT_PHONE_RING_SECONDS
    previous: int = INITIAL_VALUE
    photo_elapsed: float = 0.0
    ring_left: float | None = None
    flag: int = field(default=2)

    def idle(self, value: int, photo_flag: bool) -> bool:
        """Whether :meth:`frame` with ``value`` would change nothing and ask for nothing (no
        ring running, the value unchanged, no photo repeat counting): the frame can be skipped."""
        return self.ring_left is None and value == self.previous and not (value == 29 and photo_flag)

    def frame(self, value: int, dt: float, photo_flag: bool) -> PedFrame:
        """Advance one frame of ``dt`` seconds with the ped's current speech ``value``."""
        values: list[int] = []
        ring_started = ring_ended = stop = False
        if self.ring_left is not None:
            self.ring_left -= dt
            if self.ring_left <= 1e-9:
                self.ring_left = None
                ring_ended = True
                values.append(64)
        if value != self.previous:
            stop = True
            prev, self.previous = self.previous, value
            self.photo_elapsed = 0.0
            if value == 49:
                self.ring_left = self.phone_ring_seconds
                ring_started = True
            elif value in (7, 8):
                values.append(30 if prev == 29 else 51)
            else:
                values.append(value)
        elif value == 29 and photo_flag:
            self.photo_elapsed += dt
            if self.photo_elapsed >= PHOTO_REPEAT_SECONDS - 1e-9:
                self.photo_elapsed = 0.0
                values.append(29)
        return PedFrame(stop, tuple(values), ring_started, ring_ended)

    def near_far(self, distance: float) -> int:
        """The block's w2: 1 far / 2 near (regular); 1 near / 2 far (main cast)."""
        far = distance > self.model.far_threshold
        if self.model.maincast:
            return 2 if far else 1
        return 1 if far else 2

    def block(self, distance: float, zombie: bool) -> list[int]:
        """The request block words: w0..w9 (regular) or w0..w13 (main cast)."""
        m = self.model
        self.flag = self.near_far(distance)
        if m.maincast:
            b = [0] * 14
            b[0], b[1], b[2] = m.cast_bit, m.cast_word, self.flag
            b[4], b[5] = m.other_cast_bit, m.other_cast_word
            return b
        return [
            m.type_bit,
            m.variant_bit,
            self.flag,
            m.partner_type,
            (1 << (m.conversation - 1)) if m.conversation > 0 else 0,
            1 if m.female else 2,
            0,
            0,
            0,
            2 if zombie else 1,
        ]
