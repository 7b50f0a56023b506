"""The add-with-carry generator and the manager's rand()."""

from audio.core.clock import RngStreams
from audio.core.crt import MsvcRand
from audio.games.skate.speech.rand import SEED_TABLE, AwcGenerator, AwcRand, manager_rand

M = 2**32


class SpecAwc:
    """Straight from the spec's words, with Python integers."""

    def __init__(self, words):
        self.s = list(words)

    def draw(self):
        s = self.s
        total = s[4] + s[5]
        s[4], c = total % M, total // M
        for i in (3, 2, 1, 0):
            total = s[i] + s[i + 1] + c
            s[i], c = total % M, total // M
        s[5] = (s[5] + 1) % M
        i = 5
        while s[i] == 0 and i > 0:  # ripple while the word wrapped to 0
            i -= 1
            s[i] = (s[i] + 1) % M
        return s[0]


def test_generator_matches_the_spec_words_from_the_retail_table():
    g, ref = AwcGenerator(), SpecAwc(SEED_TABLE)
    assert [g.draw() for _ in range(2000)] == [ref.draw() for _ in range(2000)]


def test_generator_ripples_the_increment_through_wrapped_words():
    words = [5, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF]
    g, ref = AwcGenerator(words), SpecAwc(words)
    for _ in range(5):
        assert g.draw() == ref.draw()
        assert list(g.state) == ref.s


def test_generator_from_scenario_seed_is_reproducible_and_seed_dependent():
    a = AwcGenerator.from_streams(RngStreams(7))
    b = AwcGenerator.from_streams(RngStreams(7))
    c = AwcGenerator.from_streams(RngStreams(8))
    sa = [a.draw() for _ in range(10)]
    assert sa == [b.draw() for _ in range(10)]
    assert sa != [c.draw() for _ in range(10)]
    ref = SpecAwc(RngStreams(7).words("skate.library", 6))
    assert sa == [ref.draw() for _ in range(10)]


def test_table_offset_adds_to_every_word():
    assert AwcGenerator.from_table(3).state == tuple((w + 3) % M for w in SEED_TABLE)


def test_scaled_is_the_top_16_bits_times_n_shifted():
    g, ref = AwcGenerator(), SpecAwc(SEED_TABLE)
    for n in (1, 2, 3, 7, 100, 1000, 65535, 70000):
        d = ref.draw()
        assert g.scaled(n) == ((((d >> 16) * n) % M) >> 16) & 0xFFFF
    g = AwcGenerator()
    assert all(0 <= g.scaled(100) < 100 for _ in range(1000))


def test_msvc_rand_matches_the_crt_sequence_for_seed_1():
    r = MsvcRand(1)
    assert [r.rand() for _ in range(5)] == [41, 18467, 6334, 26500, 19169]


def test_awc_rand_takes_15_bits_of_a_shared_draw():
    gen, ref = AwcGenerator(), SpecAwc(SEED_TABLE)
    r = manager_rand("awc", generator=gen)
    assert isinstance(r, AwcRand)
    assert [r.rand() for _ in range(20)] == [(ref.draw() >> 16) & 0x7FFF for _ in range(20)]
    assert isinstance(manager_rand("msvc", seed=5), MsvcRand)
