"""What the pictures draw: timeline rows, lanes, labels and legend; curves; spectrogram; graph ducker.

The figure-building functions return matplotlib Figures; these tests read the artists back
(text bounding boxes from the Agg renderer, line data, colour-bar labels) rather than trusting
that a PNG was written.
"""

from __future__ import annotations

import itertools
import tomllib
import warnings

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D

from audio.core.bus import Decision
from audio.dsp.graph import graphs_dir, load_graph
from audio.offline.plots import ducker_envelope, graph_figure, spectrogram_db, spectrogram_figure
from audio.offline.timeline import outcome_class, timeline_figure, timeline_png

SR = 48_000


def dec(t: float, outcome: str, **detail) -> Decision:
    return Decision(int(t * SR), t, "skate.speech", outcome, detail)


def voice(tag: str, slot: int, t0: float, t1: float) -> tuple[str, int, int, int]:
    return (tag, slot, int(t0 * SR), int(t1 * SR))


# The plaza's guard radio call: chirp in, line, chirp out back to back on one speaker, with long
# clip names, next to two refusals a tenth of a second apart (the case that overlapped before).
RADIO_VOICES = [
    voice("skate:6:102_75_secg1_Radio_chirp_in#0", 2, 25.5, 25.78),
    voice("skate:6:102_75_secg1_Radio#0", 2, 25.8, 28.0),
    voice("skate:6:102_75_secg1_Radio_chirp_out#0", 2, 28.0, 28.28),
    voice("skate:9:1901_69_tenm1_Shout#0", 3, 26.0, 26.37),
]
RADIO_DECISIONS = [
    dec(25.5, "Started", ped=6, clip="102_75_secg1_Radio_chirp_in"),
    dec(25.6, "Probability", ped=6, event=8277),
    dec(25.7, "Repeat", ped=6, event=8210),
    dec(25.75, "Gap", ped=6, event=8202),
    dec(26.0, "Started", ped=9, clip="1901_69_tenm1_Shout"),
]


def _boxes(fig, artists):
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    return [a.get_window_extent(r) for a in artists]


def _axes(fig):
    return fig.axes[0]


def test_timeline_labels_never_overlap_each_other_or_other_bars():
    fig = timeline_figure(RADIO_DECISIONS, 29.5, RADIO_VOICES, SR)
    ax = _axes(fig)
    texts = [t for t in ax.texts if t.get_text()]
    assert len(texts) == 4 + 3  # four voice labels, three refusal labels
    boxes = _boxes(fig, texts)
    for (a, ta), (b, tb) in itertools.combinations(zip(boxes, texts), 2):
        assert not a.overlaps(b), (ta.get_text(), tb.get_text())
    axbox = ax.get_window_extent(fig.canvas.get_renderer())
    assert all(axbox.x0 <= b.x0 and b.x1 <= axbox.x1 + 0.5 for b in boxes)  # no label runs off the axes
    bars = [
        c.get_paths()[0].get_extents(ax.transData) for c in ax.collections if isinstance(c, PolyCollection)
    ]
    assert len(bars) == len(RADIO_VOICES)
    for box, t in zip(boxes, texts):
        hits = sum(box.overlaps(b) for b in bars)
        assert hits <= (1 if t.get_gid() == "voice" else 0), t.get_text()


def test_timeline_rows_follow_speaker_order_not_first_appearance():
    order = [8, 7, 6, 5, 4, 9, 3, 2, 1]
    decisions = [dec(0.1 * k, "Spawned", ped=p) for k, p in enumerate(order)]
    voices = [voice(f"skate:{p}:line_{p}", 2, 1.0 + k, 1.5 + k) for k, p in enumerate(order)]
    fig = timeline_figure(decisions, 12.0, voices, SR)
    ax = _axes(fig)
    labels = ax.get_yticklabels()
    fig.canvas.draw()
    top_to_bottom = [t.get_text() for t in sorted(labels, key=lambda t: -t.get_window_extent().y0)]
    assert top_to_bottom == [f"skate ped {p}" for p in range(1, 10)]


def test_timeline_voice_rows_are_by_speaker_with_system_wide_decisions_on_their_own_row():
    decisions = [
        Decision(0, 0.0, "sylpheed.chatter", "Phase", {"phase": 2}),
        Decision(SR, 1.0, "sylpheed.chatter", "RollFailed", {"speaker": "ELLEN", "event": "LOCKON_1"}),
    ]
    voices = [
        voice("sylpheed:RAYMOND:MSG_RHIN_040", 0, 0.5, 2.0),
        voice("sylpheed:ELLEN:MSG_BIRD_020", 0, 2.0, 3.0),
        voice("sylpheed:ELLEN:MSG_BIRD_080", 0, 3.0, 4.0),
    ]
    ax = _axes(timeline_figure(decisions, 5.0, voices, SR))
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "sylpheed (all)",
        "sylpheed ELLEN",
        "sylpheed RAYMOND",
    ]


def test_timeline_leaves_out_a_systems_inner_steps_that_name_no_speaker():
    decisions = [
        Decision(0, 0.0, "starlancer.vm", "ThreadStarted", {"thread": 1}),
        Decision(SR, 1.0, "starlancer.radio", "Gated", {"speaker": "radio", "line": "x.ut"}),
    ]
    fig = timeline_figure(decisions, 2.0, [], SR)
    ax = _axes(fig)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["starlancer radio"]
    assert [t.get_text() for t in ax.texts] == ["Gated x.ut"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["refused / failed: Gated"]


@pytest.mark.parametrize(
    ("outcome", "cls"),
    [
        ("Repeat", "refused"),  # Skate's declared refusals
        ("TalkRefused", "refused"),  # Radiata's
        ("ThreadError", "refused"),  # Starlancer's
        ("NoEligible", "refused"),  # Sylpheed's
        ("Fault", "refused"),  # the engine's fault outcome is drawn with the refusals
        ("Notice", "other"),  # declared by no game: no word rules guess a class
        ("NoiseRefused", "other"),
        ("Message", None),  # Radiata declares it quiet
        ("Ducked", "cut"),
        ("Phase", "state"),
        ("Started", None),  # a voice start: drawn as the voice bar
    ],
)
def test_outcome_classes_come_from_the_declared_enums(outcome, cls):
    assert outcome_class(outcome) == cls


def test_a_member_carries_its_own_class():
    from audio.core.outcomes import REFUSED, STATE, Outcome

    class Local(Outcome):
        Again = "Repeat", STATE  # a name Skate declares refused: the member's own class wins
        Busy = "Busy", REFUSED

    assert outcome_class(Local.Again) == "state" and outcome_class(Local.Busy) == "refused"


def test_timeline_legend_names_the_outcomes_and_refusals_are_red_crosses():
    fig = timeline_figure(RADIO_DECISIONS + [dec(27.0, "Interrupted", ped=9)], 29.5, RADIO_VOICES, SR)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "voice on slot 2" in legend and "voice on slot 3" in legend
    assert "refused / failed: Gap, Probability, Repeat" in legend
    assert "cut short / ducked: Interrupted" in legend
    crosses = [ln for ln in _axes(fig).lines if ln.get_marker() == "x"]
    assert len(crosses) == 3
    assert all(ln.get_color() == "#c0392b" for ln in crosses)


def test_timeline_png_is_the_figure_and_not_blank(tmp_path):
    from PIL import Image

    fig = timeline_figure(RADIO_DECISIONS, 29.5, RADIO_VOICES, SR)
    out = timeline_png(RADIO_DECISIONS, tmp_path / "t.png", 29.5, RADIO_VOICES, SR)
    img = Image.open(out).convert("RGB")
    w, h = fig.get_size_inches() * 110
    assert abs(img.size[0] - w) <= 1 and abs(img.size[1] - h) <= 1
    px = np.asarray(img)
    assert len(np.unique(px.reshape(-1, 3), axis=0)) > 20  # bars, text, markers, not a blank page


def test_curves_draw_every_output_and_no_line_hides_another():
    from audio.games.skate.cli import curves_figure
    from audio.games.skate.speech.mixcurves import DEFAULT_OUTPUTS, MixCurves

    fig = curves_figure(MixCurves())
    named = " ".join(t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts())
    assert all(f"out{o} " in named for o in DEFAULT_OUTPUTS)
    for ax in fig.axes:
        lines = [ln for ln in ax.lines if ln.get_linestyle() not in ("None", "none", "")]
        assert lines, ax.get_title()
        for a, b in itertools.combinations(lines, 2):
            assert not np.allclose(a.get_ydata(), b.get_ydata()), (
                ax.get_title(),
                a.get_label(),
                b.get_label(),
            )
        styles = [(ln.get_linestyle(), ln.get_color()) for ln in lines]
        assert len(set(styles)) == len(styles)


def test_identical_curves_share_one_line_named_after_both():
    from audio.games.skate.cli import curves_figure
    from audio.games.skate.speech.mixcurves import MixCurves

    fig = curves_figure(
        MixCurves.from_dict(
            {"out6": {"x": [0, 4, 12, 25, 45, 70], "y": [32767, 30000, 21000, 11000, 3500, 0]}}
        )
    )
    labels = [ln.get_label() for ln in fig.axes[0].lines if not ln.get_label().startswith("_")]
    assert labels == [
        "out2 ped near clip = out4 guard near = out6 guard radio",
        "out3 ped far clip = out5 guard far",
    ]


def test_spectrogram_of_silence_warns_nothing_and_has_a_db_colour_bar():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = spectrogram_figure(np.zeros((SR, 2), dtype=np.float32), SR, "silence")
        fig.canvas.draw()
    main, bar = fig.axes
    assert "dB" in bar.get_ylabel()
    assert np.all(main.images[0].get_array() == -120.0)


def test_spectrogram_level_of_a_half_scale_sine_is_minus_6_db_at_its_frequency():
    f0 = 1500.0  # bin 32 of a 1024-point FFT at 48 kHz
    x = 0.5 * np.sin(2 * np.pi * f0 * np.arange(SR) / SR)
    t, f, db = spectrogram_db(x, SR)
    k = int(np.argmax(db.mean(axis=1)))
    assert f[k] == pytest.approx(f0)
    assert db[k].mean() == pytest.approx(20 * np.log10(0.5), abs=0.05)
    assert t[0] == pytest.approx(512 / SR) and np.all(np.diff(t) > 0)


def test_spectrogram_of_a_long_signal_keeps_a_bounded_frame_count():
    t, _f, db = spectrogram_db(np.zeros(SR * 10), SR, max_windows=300)
    assert db.shape == (513, len(t)) and len(t) <= 300


def _radio_ducker() -> dict:
    return tomllib.loads((graphs_dir() / "radio.toml").read_text())["ducker"]


def test_ducker_envelope_follows_the_declared_times_and_depth():
    d = _radio_ducker()
    duck = load_graph("radio").ducker
    floor = 10 ** (d["volume_db"] / 20)
    hold = 400.0
    t = np.array(
        [
            0.0,
            d["fade_out_ms"] / 2,
            d["fade_out_ms"],
            hold,
            hold + d["recovery_ms"] - 1,
            hold + d["recovery_ms"] + d["fade_in_ms"] / 2,
            hold + d["recovery_ms"] + d["fade_in_ms"],
        ]
    )
    want = [1.0, 1 - (1 - floor) / 2, floor, floor, floor, floor + (1 - floor) / 2, 1.0]
    assert ducker_envelope(duck, hold, t) == pytest.approx(want, abs=1e-9)


def test_ducker_picture_matches_the_engine_ducker():
    from audio.dsp.mixer import Ducker

    duck = load_graph("radio").ducker
    eng = Ducker(duck, SR, 480)
    hold_blocks, total_blocks = 20, 120  # 200 ms held, 1.2 s in all (10 ms blocks)
    got = []
    eng.set("line", 5, True)
    for k in range(total_blocks):
        if k == hold_blocks:
            eng.set("line", 5, False)
        eng.run(480)
        got.append(eng.buf[0, :480].copy())
    t_ms = np.arange(total_blocks * 480) / SR * 1000
    assert np.concatenate(got) == pytest.approx(ducker_envelope(duck, 200.0, t_ms), abs=2e-3)


def test_graph_plot_of_the_radio_bus_draws_its_ducker():
    d = _radio_ducker()
    fig = graph_figure(load_graph("radio"))
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "ducker" in texts and f"{d['bands']} bands, {d['volume_db']:g} dB" in texts
    env = next(ax for ax in fig.axes if ax.get_ylabel() == "gain (dB)")
    y = env.lines[0].get_ydata()
    assert y.min() == pytest.approx(d["volume_db"]) and y.max() == pytest.approx(0.0)


def test_graph_plot_of_a_voice_names_the_ducked_bus_it_sends_to():
    fig = graph_figure(load_graph("sylpheed_radio_voice"))
    assert any("bus:radio" in t.get_text() and "ducked" in t.get_text() for t in fig.axes[0].texts)
    assert not any(isinstance(a, Line2D) and a.get_ydata().size for a in fig.axes[0].lines)


def test_graph_show_prints_the_ducker(capsys):
    from audio.cli import main

    d = _radio_ducker()
    assert main(["graph", "show", "radio"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("ducker"))
    assert f"{d['volume_db']:g} dB" in line and f"{d['fade_out_ms']:g} ms" in line
    assert f"{d['bands']} priority bands" in line


def test_a_queue_wait_pairs_with_the_line_that_waited_not_an_expired_one():
    from audio.offline.timeline import _build_rows

    def radio(t: float, outcome: str, **detail) -> Decision:
        return Decision(int(t * SR), t, "starlancer.radio", outcome, detail)

    # Reliant's line is queued at 6.6 s and expires at 13.44 s; its later line at 23.9 s was
    # queued by the script at 23.0 s. Naginata's vip_res_002 waits from 6.7 s to 14.36 s.
    decisions = [
        radio(6.6, "Queued", speaker="Reliant", file="ms99_rel_001.ut"),
        radio(6.7, "Queued", speaker="Naginata", file="vip_res_002.ut"),
        radio(6.8, "Queued", speaker="Naginata", file="ms99_nag_001.ut"),
        radio(13.44, "Expired", speaker="Reliant", file="ms99_rel_001.ut"),
        radio(23.0, "Queued", speaker="Reliant", file="ms99_rel_001.ut"),
    ]
    voices = [
        ("starlancer:Naginata:vip_res_002.ut", 0, 14.36, 15.0),
        ("starlancer:Naginata:ms99_nag_001.ut", 0, 16.0, 17.0),
        ("starlancer:Reliant:ms99_rel_001.ut", 0, 23.9, 25.0),
    ]
    waits = {(r.speaker, it.label): it.wait_from for r in _build_rows(decisions, voices) for it in r.bars}
    assert waits[("Naginata", "vip_res_002.ut")] == 6.7
    assert waits[("Naginata", "ms99_nag_001.ut")] == 6.8
    assert waits[("Reliant", "ms99_rel_001.ut")] == 23.0  # not the expired 6.6 s request


def test_a_timeline_title_names_the_scenario_and_seed_and_fits(tmp_path):
    fig = timeline_figure(RADIO_DECISIONS * 20, 29.5, RADIO_VOICES, SR, title="plaza, seed 7")
    title = next(t for t in fig.texts if "plaza, seed 7" in t.get_text())
    fig.canvas.draw()
    box = title.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width
