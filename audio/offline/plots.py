"""Pictures people would rather look at than read: graphs, curves, timelines, spectrograms.

All functions write a PNG with matplotlib's Agg backend and return its path.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from audio.dsp.curves import PeakCurves, fold_azimuth
from audio.dsp.filters import highpass, lowpass, magnitude, peaking
from audio.dsp.graph import GraphSpec

__all__ = ["plot_graph", "plot_filters", "plot_spectrogram"]


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_graph(spec: GraphSpec, path: str | Path, sample_rate: int = 48_000) -> Path:
    """Draw a graph's nodes and routing and, when it has them, its PEAK curves and the
    PEAK response at a few azimuths."""
    plt = _plt()
    has_peak = all(k in spec.curves for k in ("peak_centre_hz", "peak_gain", "peak_q"))
    fig = plt.figure(figsize=(12, 7.5 if has_peak else 3.2))
    ax = fig.add_subplot(3 if has_peak else 1, 1, 1)
    ax.set_axis_off()
    ax.set_title(f"{spec.name} ({spec.kind} graph)")
    xs = {n.id: i for i, n in enumerate(spec.nodes)}
    for n in spec.nodes:
        x = xs[n.id]
        ax.add_patch(plt.Rectangle((x - 0.42, -0.3), 0.84, 0.6, fc="#dde8f5", ec="#345"))
        ax.text(x, 0.08, n.id, ha="center", va="center", fontsize=9, weight="bold")
        ax.text(x, -0.15, n.kind, ha="center", va="center", fontsize=7, color="#555")
        if n.input is not None:
            ax.annotate("", (x - 0.42, 0), (xs[n.input] + 0.42, 0),
                        arrowprops=dict(arrowstyle="->", color="#345",
                                        connectionstyle="arc3" if xs[n.input] == x - 1 else "arc3,rad=-0.4"))
        if n.to:
            ax.annotate(n.to, (x, -0.3), (x, -0.85), ha="center", fontsize=7, color="#a33",
                        arrowprops=dict(arrowstyle="<-", color="#a33"))
    ax.set_xlim(-0.6, len(spec.nodes) - 0.4)
    ax.set_ylim(-1.0, 0.5)
    if has_peak:
        pc = PeakCurves.from_graph(spec)
        az = np.arange(0, 65536, 64)
        folded = fold_azimuth(az)
        deg = az * 360.0 / 65536
        ax2 = fig.add_subplot(3, 2, 3)
        ax2.plot(deg, pc.centre_hz(folded), color="C0")
        ax2.scatter(np.array(spec.curves["peak_centre_hz"].x) * 360 / 65536, spec.curves["peak_centre_hz"].y, s=12)
        ax2.set(xlabel="azimuth (deg, 0 = front, 90 = side)", ylabel="PEAK centre (Hz)", title="centre")
        ax3 = fig.add_subplot(3, 2, 4)
        ax3.plot(deg, 20 * np.log10(pc.gain(folded)), color="C1")
        ax3.scatter(np.array(spec.curves["peak_gain"].x) * 360 / 65536,
                    20 * np.log10(spec.curves["peak_gain"].y), s=12, color="C1")
        ax3.set(xlabel="azimuth (deg)", ylabel="PEAK gain (dB)", title="gain (linear curve, shown in dB)")
        ax4 = fig.add_subplot(3, 1, 3)
        f = np.geomspace(20, 20000, 400)
        for a_deg in (0, 45, 90, 135, 180):
            c, g, q = pc(int(a_deg * 65536 / 360))
            ax4.semilogx(f, 20 * np.log10(magnitude(peaking(c, g, q, sample_rate), f, sample_rate)),
                         label=f"{a_deg} deg")
        ax4.set(xlabel="frequency (Hz)", ylabel="dB", title="PEAK head-shadow response by azimuth")
        ax4.legend(fontsize=8)
        ax4.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_filters(path: str | Path, cutoffs: list[tuple[float, float]], sample_rate: int = 48_000) -> Path:
    """HI20/LI20 magnitude responses for (HPF Hz, LPF Hz) pairs."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4))
    f = np.geomspace(10, 24000, 500)
    for hp, lp in cutoffs:
        m = magnitude(highpass(hp, sample_rate), f, sample_rate) * magnitude(lowpass(lp, sample_rate), f, sample_rate)
        ax.semilogx(f, 20 * np.log10(np.maximum(m, 1e-9)), label=f"HPF {hp:g} Hz / LPF {lp:g} Hz")
    ax.set(xlabel="frequency (Hz)", ylabel="dB", ylim=(-60, 6))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_spectrogram(audio: np.ndarray, sample_rate: int, path: str | Path, title: str = "") -> Path:
    """A spectrogram of the mono sum of ``audio`` ((samples, channels) or (samples,))."""
    plt = _plt()
    x = audio.mean(axis=1) if audio.ndim == 2 else audio
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.specgram(x, NFFT=1024, Fs=sample_rate, noverlap=768, cmap="magma", vmin=-120)
    ax.set(xlabel="time (s)", ylabel="frequency (Hz)", title=title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
