"""The library's retail rules (spec 3.2 / 3.3) against a model written from the spec text.

``SpecModel`` is an independent transcription of spec 3.2 and 3.3 (it shares only the
generator, tested on its own): random tables exercising every rule are run through both, and
the outcome, record, picks and the generator state must agree after every request.
"""

from __future__ import annotations

import random

import pytest

from audio.games.skate.formats.evt import ClipRef, EvtTable
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.manager import SpeechManager
from audio.games.skate.speech.rand import AwcGenerator
from audio.games.skate.speech.tuning import EventTuning, SpeechTuning

from .fakes import BUSM, Hdr, demo_headers, demo_table, event, rec

_W = (1, 4, 16, 64, 256, 1024, 4096, 16384)


class SpecModel:
    """Spec 3.2 / 3.3 transcribed step by step."""

    def __init__(self, table: EvtTable, headers: list[Hdr], gen: AwcGenerator) -> None:
        self.table, self.gen = table, gen
        self.events = {e.id: e for e in table.events}
        self.hdr = {h.id: h for h in headers}
        self.hidx = {cid: i for i, cid in enumerate(sorted(self.hdr))}
        self.hist = {h.id: [0xFF] * h.history_len for h in headers}
        self.cur = {h.id: 0 for h in headers}
        self.ring, self.rc = [(0, 0)] * 32, 0

    def scaled(self, n: int) -> int:
        return ((self.gen.draw() >> 16) * n >> 16) & 0xFFFF

    def recent(self, n: int, header: int) -> int:
        limit = min(n // 2, 10, 32)
        r = self.scaled(n)
        best, chosen, attempts = -1, r, 0
        while True:
            found, pos, count = None, self.rc, 0
            for _ in range(33):
                if count >= limit:
                    break
                cand, h = self.ring[pos]
                if h == header:
                    count += 1
                    if cand == r:
                        found = count - 1
                        break
                pos = (pos - 1) % 32
            if found is None:
                chosen = r
                break
            if found > best:
                best, chosen = found, r
            attempts += 1
            if attempts == 32:
                break
            r = self.scaled(n)
        self.rc = (self.rc + 1) % 32
        self.ring[self.rc] = (chosen, header)
        return chosen

    def order(self, ev) -> list[int]:
        w = [_W[r.weight_code >> 5] * (r.weight_code & 31) for r in ev.records]
        zero = [i for i, x in enumerate(w) if x == 0]
        total, out = sum(w), []
        while total > 0:
            left = self.scaled(total)
            pick = len(w) - 1
            for i, x in enumerate(w):
                left -= x
                if left < 0:
                    pick = i
                    break
            out.append(pick)
            total -= w[pick]
            w[pick] = 0
        return out + zero

    def candidates(self, cid: int) -> list[int]:
        ring, n, takes = self.hist[cid], len(self.hist[cid]), self.hdr[cid].take_count
        if n == 0:
            return list(range(takes))
        back = [ring[(self.cur[cid] - 1 - j) % n] for j in range(n)]  # cursor-1 backwards
        free = [t for t in range(takes) if t not in back]
        if free or takes == 0:
            return free
        ages = [back.index(t) for t in range(takes)]
        return [ages.index(max(ages))]

    def start(self, eid: int, words: list[int]):
        ev = self.events.get(eid)
        if ev is None:
            return ("UnknownEvent", None, ())
        if self.scaled(100) > ev.probability:
            return ("Probability", None, ())
        if ev.conditions or ev.flags2 & 0x18:
            return ("Unsupported", None, ())
        packed = (eid << 16) | (self.table.sub_bank << 8) | self.table.bank
        for i in self.order(ev):
            r = ev.records[i]
            if self.scaled(100) >= r.probability:
                continue
            ok = True
            for k in range(len(ev.fields)):
                want = r.values[k] if k < len(r.values) else 0
                f = ev.fields[k]
                word = packed if f == 0 else (words[f - 1] if f - 1 < len(words) else 0)
                if want and not word & want:
                    ok = False
            if not ok or len(r.clips) > 12 or r.mode not in (0, 2) or r.locals:
                continue
            if any(
                c.lookup_mode or c.param_count or c.clip_id not in self.hdr or self.hdr[c.clip_id].flags
                for c in r.clips
            ):
                continue
            lists, total = [], 0
            for c in r.clips:
                cl = self.candidates(c.clip_id)[: 255 - total]
                total += len(cl)
                lists.append(cl)
            # 3.2 d: picks in clip order; an empty list stops the picking and fails the record,
            # but the draws and ring writes of the clips before it stay
            picks = []
            for c, cl in zip(r.clips, lists, strict=True):
                if not cl:
                    break
                picks.append((c.clip_id, cl[self.recent(len(cl), self.hidx[c.clip_id])]))
            else:
                return ("Picked", i, tuple(picks))
        return ("NoRecord", None, ())

    def commit(self, picks) -> None:
        for cid, take in picks:
            n = len(self.hist[cid])
            if n:
                self.hist[cid][self.cur[cid]] = take
                self.cur[cid] = (self.cur[cid] + 1) % n


def _random_table(rnd: random.Random) -> tuple[EvtTable, list[Hdr]]:
    headers = []
    for cid in range(1, 16):
        takes = rnd.choice([0, 1, 2, 3, 5, 30]) if cid != 1 else 3
        flags = 0x80 if rnd.random() < 0.05 else 0
        headers.append(Hdr(cid, takes, rnd.choice([0, takes, takes]), flags=flags))
    events = []
    for eid in range(8300, 8312):
        records = []
        for _ in range(rnd.randint(1, 4)):
            n = rnd.choice([1, 1, 2, 3, 12, 13])
            clips = [
                ClipRef(
                    rnd.randint(1, 17),
                    lookup_mode=1 if rnd.random() < 0.03 else 0,
                    param_count=2 if rnd.random() < 0.03 else 0,
                )
                for _ in range(n)
            ]
            values = tuple(rnd.choice([0, 0, 1, 2, 3]) for _ in range(rnd.randint(0, 4)))
            records.append(
                rec(
                    clips,
                    values,
                    weight_code=rnd.choice([0, 0x21, 0x39, 0x45]),
                    probability=rnd.choice([100, 100, 60]),
                    mode=rnd.choice([0, 0, 2, 1, 3]),
                    locals=1 if rnd.random() < 0.05 else 0,
                )
            )
        fields = tuple(rnd.choice([0, 1, 2, 3]) for _ in range(rnd.randint(0, 3)))
        events.append(
            event(
                eid,
                records,
                fields=fields,
                probability=rnd.choice([100, 100, 95]),
                flags2=0x10 if rnd.random() < 0.05 else 0,
            )
        )
    return EvtTable(1, 2, events, "rand.evt"), headers


@pytest.mark.parametrize("seed", range(24))
def test_library_agrees_with_the_spec_model_draw_for_draw(seed):
    rnd = random.Random(seed)
    table, headers = _random_table(rnd)
    lib = SpeechLibrary(table, headers, AwcGenerator.from_table(seed + 1))
    model = SpecModel(table, headers, AwcGenerator.from_table(seed + 1))
    seen = set()
    for _ in range(250):
        eid = rnd.randint(8299, 8312)
        words = [rnd.randint(0, 3) for _ in range(rnd.randint(0, 3))]
        c = lib.start(eid, words)
        want = model.start(eid, words)
        assert (c.outcome, c.record, c.picks) == want, (eid, words, c)
        assert lib.generator.state == model.gen.state
        seen.add(c.outcome)
        if c.ok:
            lib.commit(c.picks)
            model.commit(c.picks)
    assert "Picked" in seen and "NoRecord" in seen


def lib_of(events, headers, gen=None):
    return SpeechLibrary(EvtTable(1, 0, list(events), "t.evt"), headers, gen or AwcGenerator())


def test_unported_record_features_skip_only_that_record():
    hdrs = [Hdr(1, 2, 2), Hdr(2, 2, 2, flags=0x80), Hdr(3, 2, 2)]
    bad = [
        rec([1] * 13, ()),
        rec([2], ()),
        rec([99], ()),
        rec([1], (), mode=1),
        rec([1], (), mode=3),
        rec([1], (), locals=1),
        rec([ClipRef(1, lookup_mode=1)], ()),
        rec([ClipRef(1, param_count=2)], ()),
    ]
    expect = ["13 clips", "flags", "missing clip 99", "mode 1", "mode 3", "locals", "lookup", "parameter"]
    for r, word in zip(bad, expect, strict=True):
        lib = lib_of([event(8300, [r, rec([3], (), weight_code=0)], fields=())], hdrs)
        c = lib.start(8300, [])
        assert c.ok and c.record == 1 and c.picks[0][0] == 3, (word, c)
        assert word in c.skipped[0][1], (word, c.skipped)


def test_event_level_features_still_fail_the_event():
    lib = lib_of(
        [
            event(8301, [rec([1], ())], fields=(), conditions=(b"\0\0\0",)),
            event(8302, [rec([1], ())], fields=(), flags2=0x08),
        ],
        [Hdr(1, 2, 2)],
    )
    assert lib.start(8301, []).outcome == "Unsupported" and lib.start(8302, []).outcome == "Unsupported"


def test_a_clip_with_zero_takes_fails_the_record_after_the_earlier_clips_picks():
    for hist in (0, 3):
        table = EvtTable(1, 0, [event(8300, [rec([1, 2], ())], fields=())], "t.evt")
        hdrs = [Hdr(1, 2, 2), Hdr(2, 0, hist)]
        lib = SpeechLibrary(table, hdrs, AwcGenerator())
        model = SpecModel(table, hdrs, AwcGenerator())
        c = lib.start(8300, [])
        assert c.outcome == "NoRecord" and "no takes" in c.skipped[0][1]
        assert model.start(8300, []) == ("NoRecord", None, ())
        # clip 1's recent_pick drew and wrote the ring (slot 1, header index 0) before clip 2 failed
        assert lib.generator.state == model.gen.state and lib.ring_cursor == 1 and lib.ring[1][1] == 0
        three = AwcGenerator()
        for _ in range(3):  # event probability, one order draw, one record draw
            three.draw()
        assert lib.generator.state != three.state  # ... and clip 1's pick drew after them


def test_a_clip_with_zero_takes_first_fails_before_any_pick():
    lib = lib_of([event(8300, [rec([2, 1], ())], fields=())], [Hdr(1, 2, 2), Hdr(2, 0, 0)])
    c = lib.start(8300, [])
    assert c.outcome == "NoRecord" and "no takes" in c.skipped[0][1]
    ref = AwcGenerator()
    for _ in range(3):
        ref.draw()
    assert lib.generator.state == ref.state and lib.ring_cursor == 0


def test_candidates_are_capped_at_255_across_a_record():
    hdrs = [Hdr(c, 30, 0) for c in range(1, 13)]
    nine = lib_of([event(8300, [rec(list(range(1, 10)), ())], fields=())], hdrs, AwcGenerator.from_table(3))
    seen = set()
    for _ in range(200):
        c = nine.start(8300, [])
        assert c.ok
        seen.add(c.picks[8][1])
    assert max(seen) == 14  # 8 x 30 = 240: clip 9 keeps 15 candidates (takes 0-14)
    twelve = lib_of([event(8300, [rec(list(range(1, 13)), ())], fields=())], hdrs)
    c = twelve.start(8300, [])
    assert c.outcome == "NoRecord" and "255" in c.skipped[0][1] and "clip 10" in c.skipped[0][1]
    # clips 1..9 drew and wrote the ring before clip 10 found the cap reached
    assert twelve.ring_cursor == 9 and [h for _, h in twelve.ring[1:10]] == list(range(9))


def test_field_matching_walks_the_events_fields():
    # the record has more values than the event has fields: the extra one is never read
    lib = lib_of([event(8300, [rec([1], (BUSM, 0x8000))], fields=(1,))], [Hdr(1, 2, 2)])
    assert lib.start(8300, [BUSM]).ok
    # fewer values than fields: the missing value reads as 0 (any)
    lib = lib_of([event(8300, [rec([1], (BUSM,))], fields=(1, 2, 3))], [Hdr(1, 2, 2)])
    assert lib.start(8300, [BUSM, 0, 0]).ok
    assert lib.start(8300, [0x2, 0, 0]).outcome == "NoRecord"


class _Count:
    def __init__(self) -> None:
        self.calls = 0

    def rand(self) -> int:
        self.calls += 1
        return 0


def test_the_gate_draws_before_the_library_reports_an_unknown_event():
    rng = _Count()
    m = SpeechManager(
        SpeechTuning(events={8207: EventTuning()}), SpeechLibrary(demo_table(), demo_headers()), rng=rng
    )
    r = m.request(59, 1234, [BUSM, 1, 2], 100.0)
    assert r.outcome == "UnknownEvent" and r.stage == "library" and rng.calls == 1
    m.line_started(59, 1234, 100.0)
    r = m.request(59, 1234, [BUSM, 1, 2], 100.5)  # default repeat 0: gap/not-follow pass
    assert rng.calls == 2
    rep = SpeechManager(
        SpeechTuning(default=EventTuning(repeat=5.0)),
        SpeechLibrary(demo_table(), demo_headers()),
        rng=_Count(),
    )
    rep.line_started(59, 1234, 10.0)
    r = rep.request(59, 1234, [BUSM, 1, 2], 11.0)
    assert r.outcome == "Repeat" and r.stage == "gate"  # the gate refuses first, even for an unknown event
