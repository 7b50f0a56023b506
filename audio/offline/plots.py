"""Pictures people would rather look at than read: graphs, curves, timelines, spectrograms.

Each picture has a ``*_figure`` function building the matplotlib Figure (so tests can look at
what is drawn) and a ``plot_*`` function writing it as a PNG and returning its path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from audio.core.errors import GraphError
from audio.dsp.curves import PeakCurves, fold_azimuth
from audio.dsp.filters import highpass, lowpass, magnitude, peaking
from audio.dsp.graph import DuckerSpec, GraphSpec, load_graph

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "ducker_envelope",
    "ducker_text",
    "graph_figure",
    "plot_filters",
    "plot_graph",
    "plot_spectrogram",
    "spectrogram_db",
    "spectrogram_figure",
]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _figure(width: float, height: float) -> Figure:
    """A Figure with its own Agg canvas (no pyplot state to close)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def ducker_envelope(duck: DuckerSpec, hold_ms: float, t_ms: np.ndarray) -> np.ndarray:
    """Linear gain over time ``t_ms`` (>= 0) of a band below a trigger held from 0 to ``hold_ms``.

    The gain falls linearly over ``fade_out_ms`` to ``volume_db`` and keeps falling (or holds)
    while the trigger is on and for ``recovery_ms`` after it, then rises linearly back to 1
    over ``fade_in_ms`` (the ``[ducker]`` of ``graphs/*.toml``).
    """
    floor = 10.0 ** (duck.volume_db / 20.0)

    def down(t: np.ndarray | float) -> np.ndarray:
        return 1.0 - (1.0 - floor) * np.clip(np.asarray(t) / max(duck.fade_out_ms, 1e-9), 0.0, 1.0)

    release = hold_ms + duck.recovery_ms
    up = (1.0 - floor) * np.clip((t_ms - release) / max(duck.fade_in_ms, 1e-9), 0.0, 1.0)
    return np.where(t_ms < release, down(t_ms), np.minimum(down(release) + up, 1.0))


def ducker_text(duck: DuckerSpec) -> str:
    """One line saying what a bus's ducker does."""
    return (
        f"{duck.bands} priority bands: while a send of band b plays, sends of bands below b "
        f"fade to {duck.volume_db:g} dB over {duck.fade_out_ms:g} ms; after release they hold "
        f"{duck.recovery_ms:g} ms, then return over {duck.fade_in_ms:g} ms"
    )


def _ducked_buses(spec: GraphSpec) -> dict[str, DuckerSpec]:
    """Buses this graph sends into that have a ducker (``bus:NAME`` targets)."""
    out: dict[str, DuckerSpec] = {}
    for n in spec.nodes:
        if n.to and n.to.startswith("bus:"):
            try:
                target = load_graph(n.to[4:])
            except GraphError:
                continue
            if target.ducker is not None:
                out[n.to] = target.ducker
    return out


def _draw_nodes(ax, spec: GraphSpec) -> None:
    """Boxes for the nodes, arrows for the chain and the sends; a bus's ducker as a box at its input."""
    from matplotlib.patches import Rectangle

    ax.set_axis_off()
    ax.set_title(f"{spec.name} ({spec.kind} graph)")
    shift = 1 if spec.ducker is not None else 0
    xs = {n.id: i + shift for i, n in enumerate(spec.nodes)}
    ducked = _ducked_buses(spec)
    for n in spec.nodes:
        x = xs[n.id]
        ax.add_patch(Rectangle((x - 0.42, -0.3), 0.84, 0.6, fc="#dde8f5", ec="#345"))
        ax.text(x, 0.08, n.id, ha="center", va="center", fontsize=9, weight="bold")
        ax.text(x, -0.15, n.kind, ha="center", va="center", fontsize=7, color="#555")
        if n.input is not None:
            ax.annotate(
                "",
                (x - 0.42, 0),
                (xs[n.input] + 0.42, 0),
                arrowprops={
                    "arrowstyle": "->",
                    "color": "#345",
                    "connectionstyle": "arc3" if xs[n.input] == x - 1 else "arc3,rad=-0.4",
                },
            )
        if n.to:
            label = n.to + (f"\n(ducked by its {ducked[n.to].bands}-band ducker)" if n.to in ducked else "")
            ax.annotate(
                label,
                (x, -0.3),
                (x, -0.85),
                ha="center",
                va="top",
                fontsize=7,
                color="#a33",
                arrowprops={"arrowstyle": "<-", "color": "#a33"},
            )
    if spec.ducker is not None:
        d = spec.ducker
        ax.add_patch(Rectangle((-0.42, -0.3), 0.84, 0.6, fc="#fbe3cf", ec="#a55a1a"))
        ax.text(0, 0.1, "ducker", ha="center", va="center", fontsize=9, weight="bold", color="#7a3d0c")
        ax.text(0, -0.12, f"{d.bands} bands, {d.volume_db:g} dB", ha="center", va="center", fontsize=7)
        ax.annotate("", (0.58, 0), (0.42, 0), arrowprops={"arrowstyle": "->", "color": "#345"})
        ax.annotate(
            "sends in,\nscaled per band",
            (0, 0.3),
            (0, 0.75),
            ha="center",
            va="bottom",
            fontsize=7,
            color="#a55a1a",
            arrowprops={"arrowstyle": "->", "color": "#a55a1a"},
        )
    ax.set_xlim(-0.6, len(spec.nodes) + shift - 0.4)
    ax.set_ylim(-1.2, 1.1 if spec.ducker is not None else 0.5)


def _draw_ducker(ax, duck: DuckerSpec) -> None:
    """The gain of a lower band while a higher one is held for 600 ms."""
    hold = 600.0
    t = np.linspace(-100.0, hold + duck.recovery_ms + duck.fade_in_ms + 200.0, 1200)
    g = np.where(t < 0, 1.0, ducker_envelope(duck, hold, np.maximum(t, 0.0)))
    ax.plot(t, 20 * np.log10(g), color="#a55a1a", label="gain of a lower band")
    ax.axvspan(0, hold, color="#a55a1a", alpha=0.08, label="higher band held (600 ms)")
    for x, what, ha in (
        (duck.fade_out_ms, f" fade out {duck.fade_out_ms:g} ms", "left"),
        (hold + duck.recovery_ms, f"recovery {duck.recovery_ms:g} ms ", "right"),
        (hold + duck.recovery_ms + duck.fade_in_ms, f" fade in {duck.fade_in_ms:g} ms", "left"),
    ):
        ax.axvline(x, color="#777", lw=0.7, ls=":")
        ax.text(x, 3.0, what, fontsize=7, va="center", ha=ha, color="#555")
    ax.set(
        xlabel="time (ms)",
        ylabel="gain (dB)",
        ylim=(duck.volume_db - 3, 6),
        title=f"ducker: {ducker_text(duck)}",
    )
    ax.title.set_fontsize(8)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, alpha=0.3)


def _draw_peak(fig, spec: GraphSpec, gs, sample_rate: int) -> None:
    pc = PeakCurves.from_graph(spec)
    az = np.arange(0, 65536, 64)
    folded = fold_azimuth(az)
    deg = az * 360.0 / 65536
    ax2 = fig.add_subplot(gs[1, 0])
    ax2.plot(deg, pc.centre_hz(folded), color="C0")
    ax2.scatter(
        np.array(spec.curves["peak_centre_hz"].x) * 360 / 65536, spec.curves["peak_centre_hz"].y, s=12
    )
    ax2.set(xlabel="azimuth (deg, 0 = front, 90 = side)", ylabel="PEAK centre (Hz)", title="centre")
    ax3 = fig.add_subplot(gs[1, 1])
    ax3.plot(deg, 20 * np.log10(pc.gain(folded)), color="C1")
    ax3.scatter(
        np.array(spec.curves["peak_gain"].x) * 360 / 65536,
        20 * np.log10(spec.curves["peak_gain"].y),
        s=12,
        color="C1",
    )
    ax3.set(xlabel="azimuth (deg)", ylabel="PEAK gain (dB)", title="gain (linear curve, shown in dB)")
    ax4 = fig.add_subplot(gs[2, :])
    f = np.geomspace(20, 20000, 400)
    for k, a_deg in enumerate((0, 45, 90, 135, 180)):
        c, g, q = pc(int(a_deg * 65536 / 360))
        ax4.semilogx(
            f,
            20 * np.log10(magnitude(peaking(c, g, q, sample_rate), f, sample_rate)),
            label=f"{a_deg} deg",
            ls=("-", "--", "-.", ":", "-")[k],
        )
    ax4.set(xlabel="frequency (Hz)", ylabel="dB", title="PEAK head-shadow response by azimuth")
    ax4.legend(fontsize=8)
    ax4.grid(True, which="both", alpha=0.3)


def graph_figure(spec: GraphSpec, sample_rate: int = 48_000) -> Figure:
    """A graph's nodes and routing; a bus's ducker and its envelope; the PEAK curves and
    responses at a few azimuths when the graph has them."""
    has_peak = all(k in spec.curves for k in ("peak_centre_hz", "peak_gain", "peak_q"))
    heights = [1.0] + ([1.0, 1.0] if has_peak else []) + ([1.1] if spec.ducker is not None else [])
    fig = _figure(12, 3.2 + (4.3 if has_peak else 0) + (2.8 if spec.ducker is not None else 0))
    gs = fig.add_gridspec(len(heights), 2, height_ratios=heights)
    _draw_nodes(fig.add_subplot(gs[0, :]), spec)
    if has_peak:
        _draw_peak(fig, spec, gs, sample_rate)
    if spec.ducker is not None:
        _draw_ducker(fig.add_subplot(gs[-1, :]), spec.ducker)
    fig.tight_layout()
    return fig


def plot_graph(spec: GraphSpec, path: str | Path, sample_rate: int = 48_000, fmt: str = "png") -> Path:
    """Write :func:`graph_figure` as a picture (``fmt``: png, svg, pdf); returns its path."""
    graph_figure(spec, sample_rate).savefig(path, dpi=110, format=fmt)
    return Path(path)


def plot_filters(path: str | Path, cutoffs: list[tuple[float, float]], sample_rate: int = 48_000) -> Path:
    """HI20/LI20 magnitude responses for (HPF Hz, LPF Hz) pairs."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    f = np.geomspace(10, 24000, 500)
    for hp, lp in cutoffs:
        m = magnitude(highpass(hp, sample_rate), f, sample_rate) * magnitude(
            lowpass(lp, sample_rate), f, sample_rate
        )
        ax.semilogx(f, 20 * np.log10(np.maximum(m, 1e-9)), label=f"HPF {hp:g} Hz / LPF {lp:g} Hz")
    ax.set(xlabel="frequency (Hz)", ylabel="dB", ylim=(-60, 6))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


SPEC_FLOOR_DB = -120.0
"""Lowest level drawn in a spectrogram (dB re a full-scale sine); silence sits here."""


def spectrogram_db(
    x: np.ndarray, sample_rate: int, nfft: int = 1024, max_windows: int = 4000
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Short-time spectrum of mono ``x``: ``(times s, freqs Hz, level dB (freqs, times))``.

    Hann window of ``nfft`` samples, hop nfft/4 (longer for long signals, at most
    ``max_windows`` windows). 0 dB is a full-scale sine centred on a bin; levels are floored
    at :data:`SPEC_FLOOR_DB`, so silence needs no logarithm of zero.
    """
    x = np.asarray(x, dtype=np.float64)
    if len(x) < nfft:
        x = np.pad(x, (0, nfft - len(x)))
    hop = max(nfft // 4, -(-(len(x) - nfft) // max(max_windows - 1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(x, nfft)[::hop]
    w = np.hanning(nfft)
    spec = np.abs(np.fft.rfft(windows * w, axis=1)) * (2.0 / w.sum())  # sine amplitude per bin
    floor = 10.0 ** (SPEC_FLOOR_DB / 20.0)
    db = 20.0 * np.log10(np.maximum(spec, floor)).T
    times = (np.arange(windows.shape[0]) * hop + nfft / 2) / sample_rate
    return times, np.fft.rfftfreq(nfft, 1.0 / sample_rate), db


def spectrogram_figure(audio: np.ndarray, sample_rate: int, title: str = "") -> Figure:
    """A spectrogram of the mono sum of ``audio`` ((samples, channels) or (samples,)), colour bar in dB."""
    x = audio.mean(axis=1) if audio.ndim == 2 else audio
    t, f, db = spectrogram_db(x, sample_rate)
    fig = _figure(10, 4)
    ax = fig.add_subplot(1, 1, 1)
    dt = t[1] - t[0] if len(t) > 1 else len(x) / sample_rate
    im = ax.imshow(
        db,
        origin="lower",
        aspect="auto",
        cmap="magma",
        vmin=SPEC_FLOOR_DB,
        vmax=0.0,
        extent=(t[0] - dt / 2, t[-1] + dt / 2, 0.0, f[-1]),
        interpolation="nearest",
    )
    bar = fig.colorbar(im, ax=ax, pad=0.015)
    bar.set_label("level (dB re full-scale sine)")
    ax.set(xlabel="time (s)", ylabel="frequency (Hz)", title=title or "spectrogram (mono sum)")
    fig.tight_layout()
    return fig


def plot_spectrogram(
    audio: np.ndarray, sample_rate: int, path: str | Path, title: str = "", fmt: str = "png"
) -> Path:
    """Write :func:`spectrogram_figure` as a picture (``fmt``: png, svg, pdf); returns its path."""
    spectrogram_figure(audio, sample_rate, title).savefig(path, dpi=110, format=fmt)
    return Path(path)
