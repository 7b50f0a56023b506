"""The speech library: draw order, record order, history rings, the recent ring, failures."""

import collections

from audio.games.skate.formats.evt import ClipRef, EvtTable
from audio.games.skate.speech.library import SpeechLibrary
from audio.games.skate.speech.rand import AwcGenerator

from .fakes import BUSM, Hdr, demo_headers, demo_table, event, rec


def lib_of(events, headers, gen=None):
    return SpeechLibrary(EvtTable(1, 0, list(events), "t.evt"), headers, gen or AwcGenerator())


def test_history_ring_cycles_every_take_before_repeating():
    for n in (2, 5, 12):
        lib = lib_of([event(8300, [rec([1], ())], fields=())], [Hdr(1, n, n)])
        picks = []
        for _ in range(4 * n):
            c = lib.start(8300, [])
            assert c.ok
            lib.commit(c.picks)
            picks.append(c.picks[0][1])
        for k in range(0, 4 * n, n):
            assert sorted(picks[k : k + n]) == list(range(n)), picks


def test_history_is_written_only_on_commit():
    lib = lib_of([event(8300, [rec([1], ())], fields=())], [Hdr(1, 3, 3)])
    first = lib.start(8300, []).picks
    assert lib.history[1].takes == [0xFF] * 3
    lib.commit(first)
    assert lib.history[1].takes[0] == first[0][1] and lib.history[1].cursor == 1


def test_full_ring_offers_only_the_oldest_take():
    lib = lib_of([event(8300, [rec([1], ())], fields=())], [Hdr(1, 3, 3)])
    lib.commit([(1, 2), (1, 0), (1, 1)])
    assert lib.history[1].candidates(3) == [2]
    c = lib.start(8300, [])
    assert c.picks == ((1, 2),)


def test_recent_ring_avoids_the_last_picks_of_the_same_header():
    for n in (4, 6, 9, 30):
        limit = min(n // 2, 10)
        lib = lib_of([event(8300, [rec([1], ())], fields=())], [Hdr(0, 0, 0), Hdr(1, n, 0)])
        picks = []
        for _ in range(400):
            c = lib.start(8300, [])
            lib.commit(c.picks)  # history length 0: every take stays a candidate
            picks.append(c.picks[0][1])
        for i in range(limit, len(picks)):
            assert picks[i] not in picks[i - limit : i], (n, i)
        assert len(set(picks)) == n


def test_recent_ring_first_write_lands_in_slot_1_and_stores_candidate_indices():
    lib = lib_of([event(8300, [rec([5], ())], fields=())], [Hdr(5, 3, 3), Hdr(7, 2, 2)])
    lib.commit([(5, 0)])  # candidates now [1, 2]
    c = lib.start(8300, [])
    cand_index = [1, 2].index(c.picks[0][1])
    assert lib.ring_cursor == 1
    assert lib.ring[1] == (cand_index, 0)  # header 5 is index 0 in id order
    assert lib.ring[0] == (0, 0)


def test_single_candidate_draws_once_without_redraw():
    gen = AwcGenerator()
    lib = lib_of([], [Hdr(1, 1, 1)], gen)
    ref = AwcGenerator()
    for _ in range(5):
        assert lib.recent_pick(1, 0) == 0
        ref.draw()
    assert gen.state == ref.state


def test_weight_zero_records_come_last_in_table_order():
    records = [
        rec([1], (), weight_code=0),
        rec([1], (), weight_code=0x21),
        rec([1], (), weight_code=0),
        rec([1], (), weight_code=0x39),
    ]
    lib = lib_of([event(8300, records, fields=())], [Hdr(1, 1, 1)])
    for _ in range(50):
        order = lib.record_order(lib.event(8300))
        assert order[2:] == [0, 2] and sorted(order[:2]) == [1, 3]


def test_weighted_order_favours_heavy_records_in_proportion():
    # weights: 0x39 = 4 * 25 = 100, 0x21 = 4 * 1 = 4... use 3:1 -> codes 0x23 (12) and 0x21 (4)
    records = [rec([1], (), weight_code=0x21), rec([1], (), weight_code=0x23), rec([1], (), weight_code=0x24)]
    lib = lib_of([event(8300, records, fields=())], [Hdr(1, 1, 1)], AwcGenerator.from_table(12345))
    firsts = collections.Counter(lib.record_order(lib.event(8300))[0] for _ in range(6000))
    total = 4 + 12 + 16
    for i, w in enumerate((4, 12, 16)):
        assert abs(firsts[i] / 6000 - w / total) < 0.025, firsts


def test_draw_order_event_probability_then_order_then_one_draw_per_record():
    records = [rec([1], (BUSM, 8, 0)), rec([1], (BUSM, 16, 0)), rec([1], (BUSM, 2, 0), weight_code=0)]
    gen = AwcGenerator()
    lib = lib_of([event(8300, records)], [Hdr(1, 2, 2)], gen)
    c = lib.start(8300, [BUSM, 1, 2])  # no record matches variant 1
    assert c.outcome == "NoRecord" and [r for r, _ in c.skipped] != []
    ref = AwcGenerator()
    for _ in range(1 + 2 + 3):  # event probability, 2 weighted order draws, 3 record draws
        ref.draw()
    assert gen.state == ref.state


def test_field_match_chooses_the_near_or_far_record():
    lib = SpeechLibrary(demo_table(), demo_headers())
    near = lib.start(8210, [BUSM, 1, 2])
    far = lib.start(8210, [BUSM, 1, 1])
    assert near.picks[0][0] == 10 and far.picks[0][0] == 11


def test_packed_word_field_reads_id_sub_bank_and_bank():
    table = EvtTable(
        1,
        0,
        [
            event(8300, [rec([1], (0x00010000,))], fields=(0,)),
            event(8301, [rec([1], (0x00010000,))], fields=(0,)),
        ],
        "t.evt",
    )
    lib = SpeechLibrary(table, [Hdr(1, 1, 1)])
    assert lib.start(8301, []).ok  # 8301 << 16 has bit 16 set
    assert lib.start(8300, []).outcome == "NoRecord"


def test_sequence_record_picks_its_clips_in_order():
    lib = SpeechLibrary(demo_table(), demo_headers())
    c = lib.start(8277, [0x40, 1])
    assert [cid for cid, _ in c.picks] == [20, 21, 22]


def test_failures_unknown_probability_unsupported_norecord():
    hdrs = [Hdr(1, 2, 2), Hdr(2, 2, 2, flags=0x80)]
    evs = [
        event(8300, [rec([1], ())], fields=(), probability=0),
        event(8301, [rec([1], ())], fields=(), conditions=(b"\0\0\0",)),
        event(8302, [rec([1], ())], fields=(), flags2=0x10),
        event(8303, [rec([1], (), locals=1)], fields=()),
        event(8304, [rec([ClipRef(1, lookup_mode=1)], ())], fields=()),
        event(8305, [rec([ClipRef(1, param_count=2)], ())], fields=()),
        event(8306, [rec([2], ())], fields=()),
        event(8307, [rec([1, 99], ())], fields=()),
        event(8308, [rec([1], (), mode=3)], fields=()),
    ]
    lib = lib_of(evs, hdrs)
    assert lib.start(9999, []).outcome == "UnknownEvent"
    outcomes = collections.Counter(lib.start(8300, []).outcome for _ in range(300))
    assert outcomes["Probability"] > 280  # passes only when scaled(100) == 0
    for eid, word in ((8301, "conditions"), (8302, "flags2")):
        c = lib.start(eid, [])
        assert c.outcome == "Unsupported" and word in c.reason, (eid, c)
    for eid, word in ((8303, "locals"), (8304, "lookup"), (8305, "parameter"), (8306, "flags")):
        c = lib.start(eid, [])  # record-level: that record fails
        assert c.outcome == "NoRecord" and word in c.skipped[0][1], (eid, c)
    missing = lib.start(8307, [])
    assert missing.outcome == "NoRecord" and "missing clip 99" in missing.skipped[0][1]
    assert lib.start(8308, []).outcome == "NoRecord"
