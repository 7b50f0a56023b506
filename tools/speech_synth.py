"""Shared by the demo builders: speak a line with espeak-ng, trim its silence, resample it.

The builders run once and their output is committed; espeak-ng is needed only to rebuild.
"""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["speak"]


def speak(text: str, espeak_args: list[str], workdir: Path, sample_rate: int) -> np.ndarray:
    """``text`` through ``espeak-ng ESPEAK_ARGS``: mono float64 at ``sample_rate`` Hz, with the silence
    before and after the speech cut to 30 ms (threshold 0.01 of full scale)."""
    import soundfile as sf
    from scipy.signal import resample_poly

    wav = workdir / "speech.wav"
    subprocess.run(["espeak-ng", *espeak_args, "-w", str(wav), text], check=True, capture_output=True)
    x, src = sf.read(wav, dtype="float64")
    x = x if x.ndim == 1 else x.mean(axis=1)
    loud = np.flatnonzero(np.abs(x) > 0.01)
    if loud.size:
        pad = int(0.03 * src)
        x = x[max(0, loud[0] - pad) : loud[-1] + pad]
    g = int(np.gcd(sample_rate, src))
    return resample_poly(x, sample_rate // g, src // g)


def builder_main(
    doc: str, default_out: Path, build: Callable[[Path], list[Path]], argv: list[str] | None = None
) -> int:
    """The command line of a demo builder: ``-o/--out FOLDER`` (replaced), then the files written."""
    ap = argparse.ArgumentParser(
        description=doc.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="The output folder is replaced. Needs espeak-ng on PATH.",
    )
    ap.add_argument(
        "-o", "--out", type=Path, default=default_out, help=f"output folder (default {default_out})"
    )
    args = ap.parse_args(argv)
    files = build(args.out)
    total = sum(f.stat().st_size for f in files)
    for f in files:
        print(f"{f.stat().st_size:>10}  {f.relative_to(args.out)}")
    print(f"{total:>10}  bytes in {args.out}")
    return 0
