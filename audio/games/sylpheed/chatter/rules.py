"""The rule loader and the phase merge (seed 000: ``sub_82213980``, ``sub_82213840``).

:func:`load_rules` turns a disc :class:`~audio.games.sylpheed.formats.presets.RuleTable` into the 40-byte
runtime objects (:class:`Rule`): seconds x 60 -> frames, Probability 0 skips the record,
MessageCount clamped to 32, Pattern ``"Log"`` 2 / ``"Window"`` 3 / ``"Demo"`` 4 / else 1,
the Yes mask from the odd payload slots. :func:`merge_phases` loads a crew's three phase
tables into ONE map: on every key collision the incumbent (phase 1 first) wins, and a
mismatch on the comparator's fields clears the loader's flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from audio.games.sylpheed.formats.presets import RuleTable

__all__ = [
    "FRAMES_PER_SECOND",
    "MAX_MESSAGES",
    "PATTERNS",
    "Rule",
    "RuleMap",
    "Collision",
    "MergeResult",
    "pattern_code",
    "load_rules",
    "merge_phases",
    "same_rule",
]

FRAMES_PER_SECOND = 60
MAX_MESSAGES = 32
PATTERNS = {"Log": 2, "Window": 3, "Demo": 4}


def pattern_code(text: str) -> int:
    """``"Log"`` 2, ``"Window"`` 3, ``"Demo"`` 4, anything else (the disc's ``"Sound"``) 1."""
    return PATTERNS.get(text, 1)


@dataclass(eq=False)
class Rule:
    """The 40-byte runtime rule object.

    ``messages`` is the message-id vector (+4..+8); the rest mirror +16..+36. ``used`` (+36)
    is the only field that changes at run time (the one-shot mask).
    """

    event: str
    messages: tuple[str, ...]
    probability: int  # +16 u8, per cent
    priority: int  # +17 u8
    pattern: int  # +18 u8: 1 Sound, 2 Log, 3 Window, 4 Demo
    interval: int  # +20 u32 frames
    fluctuation: int  # +24 u32 frames
    effective_time: int  # +28 u32 frames
    yes_mask: int  # +32 u32
    used: int = 0  # +36 u32, zero at construction
    source: str = field(default="", compare=False)  # the table it came from (for logs)


RuleMap = dict[str, Rule]
"""event name -> rule (the game keys it by a hash of the event record's name)."""


def load_rules(table: RuleTable) -> RuleMap:
    """The loader: one :class:`Rule` per event record whose Probability is not 0."""
    out: RuleMap = {}
    for rec in table.events:
        prob = rec.probability
        if prob & 0xFF == 0:  # read as a byte; 0 skips the record
            continue
        n = min(max(rec.message_count, 0), MAX_MESSAGES, len(rec.lines))
        lines = rec.lines[:n]
        yes = 0
        for i, (_, is_yes) in enumerate(lines):
            if is_yes:
                yes |= 1 << i
        rule = Rule(
            rec.event,
            tuple(m for m, _ in lines),
            prob & 0xFF,
            rec.priority & 0xFF,
            pattern_code(rec.pattern),
            rec.interval * FRAMES_PER_SECOND,
            rec.interval_fluctuation * FRAMES_PER_SECOND,
            rec.effective_time * FRAMES_PER_SECOND,
            yes,
            0,
            table.name,
        )
        out.setdefault(rec.event, rule)
    return out


def same_rule(a: Rule, b: Rule) -> bool:
    """The comparator: message list, Probability, Priority, Pattern, Interval,
    IntervalFluctuation, EffectiveTime (NOT the Yes mask or the used mask)."""
    return (
        a.messages == b.messages
        and a.probability == b.probability
        and a.priority == b.priority
        and a.pattern == b.pattern
        and a.interval == b.interval
        and a.fluctuation == b.fluctuation
        and a.effective_time == b.effective_time
    )


@dataclass(frozen=True)
class Collision:
    event: str
    kept: str  # table of the incumbent
    dropped: str  # table of the newcomer
    same: bool


@dataclass
class MergeResult:
    rules: RuleMap
    flag: bool = True  # the loader's byte: cleared by any mismatch
    collisions: list[Collision] = field(default_factory=list)

    @property
    def mismatches(self) -> list[Collision]:
        return [c for c in self.collisions if not c.same]


def merge_phases(tables: list[RuleTable]) -> MergeResult:
    """Load phase tables in order into one map; the incumbent wins every collision."""
    res = MergeResult({})
    for t in tables:
        for event, rule in load_rules(t).items():
            inc = res.rules.get(event)
            if inc is None:
                res.rules[event] = rule
                continue
            same = same_rule(inc, rule)
            res.collisions.append(Collision(event, inc.source, rule.source, same))
            if not same:
                res.flag = False
    return res
