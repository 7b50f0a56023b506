"""PedSpeech: changes only, 7/8 remap, phone ring, photographer repeat, near/far flag, block words."""

from audio.games.skate.speech.ped import PedModel, PedSpeech

DT = 1 / 30


def run(ped, values, photo=False):
    return [ped.frame(v, DT, photo) for v in values]


def test_acts_only_on_changes():
    frames = run(PedSpeech(PedModel(59)), [53, 53, 53, 6, 6])
    assert [f.values for f in frames] == [(53,), (), (), (6,), ()]
    assert [f.stop_line for f in frames] == [True, False, False, True, False]


def test_7_and_8_become_30_after_29_else_51():
    assert [f.values for f in run(PedSpeech(PedModel(59)), [29, 7, 2, 8])] == [(29,), (30,), (2,), (51,)]


def test_phone_ring_then_cell_greet_after_the_ring_length():
    ped = PedSpeech(PedModel(59), phone_ring_seconds=1.0)
    frames = run(ped, [49] * 40)
    assert frames[0].ring_started and frames[0].values == ()
    ends = [i for i, f in enumerate(frames) if f.values == (64,)]
    assert ends == [30] and frames[30].ring_ended
    ped = PedSpeech(PedModel(59), phone_ring_seconds=0.5)
    assert [i for i, f in enumerate(run(ped, [49] * 40)) if f.values] == [15]


def test_photographer_repeats_every_second_while_the_flag_is_set():
    ped = PedSpeech(PedModel(59))
    frames = run(ped, [29] * 95, photo=True)
    assert [i for i, f in enumerate(frames) if f.values] == [0, 30, 60, 90]
    ped = PedSpeech(PedModel(59))
    assert [i for i, f in enumerate(run(ped, [29] * 95)) if f.values] == [0]


def test_near_far_flag_against_the_threshold_and_inverted_for_the_main_cast():
    ped = PedSpeech(PedModel(59, far_threshold=20.0))
    assert [ped.near_far(d) for d in (5.0, 20.0, 20.01)] == [2, 2, 1]
    pro = PedSpeech(PedModel(200, kind="pro", far_threshold=30.0, cast_bit=4))
    assert [pro.near_far(d) for d in (25.0, 31.0)] == [1, 2]


def test_block_words():
    m = PedModel(59, type_bit=0x1000, variant_bit=4, partner_type=0x2, conversation=3, female=False)
    assert PedSpeech(m).block(30.0, zombie=True) == [0x1000, 4, 1, 0x2, 4, 2, 0, 0, 0, 2]
    f = PedModel(47, type_bit=0x2, variant_bit=2, female=True)
    assert PedSpeech(f).block(3.0, zombie=False) == [0x2, 2, 2, 0, 0, 1, 0, 0, 0, 1]
    pro = PedModel(
        200, kind="pro", cast_bit=8, cast_word=77, other_cast_bit=2, other_cast_word=55, far_threshold=30.0
    )
    b = PedSpeech(pro).block(40.0, zombie=False)
    assert len(b) == 14 and b[:6] == [8, 77, 2, 0, 2, 55]
