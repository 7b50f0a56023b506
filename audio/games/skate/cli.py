"""``barkbus skate ...``: index, list, inspect, decode and export Skate 3 speech banks.

:func:`register` adds the ``skate`` command group to an argparse sub-parser set; every command sets
``func`` (``args.func(args) -> int`` exit code).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audio.core.errors import FormatError, InputError, ScenarioError
from audio.core.schema import did_you_mean
from audio.games.skate.formats import BANK_PREFIXES

if TYPE_CHECKING:  # the commands import these when they run, so ``skate --help`` loads no codec
    import numpy as np
    from matplotlib.figure import Figure

    from audio.games.skate.formats.install import Clip, SkateInstall, SpeechBank
    from audio.games.skate.speech.mixcurves import MixCurves

__all__ = ["DEMO_ROOT", "curves_figure", "register"]

#: The embedded demo install (default ``--root``).
DEMO_ROOT = Path(__file__).resolve().parent / "demo"


def _add_root(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--root",
        type=Path,
        default=DEMO_ROOT,
        help="install root holding data/audio/english/<bank>speech.big (default: the demo install)",
    )
    p.add_argument(
        "--bank", default="livingworld", choices=BANK_PREFIXES, help="speech bank (default livingworld)"
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``skate`` command group."""
    top = subparsers.add_parser(
        "skate",
        help="Skate 3 speech banks: index, ls, info, decode, export, curves",
        description="Read Skate 3 speech banks (livingworld/maincast/announcer "
        "speech.big with their .hdr/.sth/.evt).",
    )
    sub = top.add_subparsers(dest="skate_command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "curves",
        help="plot the voice's level, send and filter curves over distance (PNG)",
        description="Draw the speech voice's mix curves (level outputs, sends, HPF/LPF cutoffs "
        "over distance; barkbus's documented defaults, or a scenario's [skate.mix] "
        "overrides) and the PEAK head-shadow curves over azimuth.",
    )
    p.add_argument("-o", "--output", type=Path, default=Path("skate-curves.png"), help="PNG to write")
    p.add_argument("--scenario", type=Path, help="take [skate.mix] overrides from this scenario")
    p.set_defaults(func=cmd_curves)

    p = sub.add_parser(
        "tuning",
        help="check a speech tuning file and write it out in full (or the demo's)",
        description="Read a tuning file (per-event tSpeechTuning fields, default inheritance, "
        "not-follow lists, challenge exclusions), report problems, and write the "
        "normalised file: a template for exporting your own game's values.",
    )
    p.add_argument("file", nargs="?", type=Path, help="tuning TOML (default: the demo's)")
    p.add_argument("-o", "--output", type=Path, help="write the normalised tuning here (default: stdout)")
    p.set_defaults(func=cmd_tuning)

    p = sub.add_parser("index", help="index a bank and print its counts and the time taken")
    _add_root(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("ls", help="list clips (name, .hdr id, takes, seconds)")
    _add_root(p)
    p.add_argument(
        "--event", type=int, help="only clips of this event number (the name's first field, e.g. 501)"
    )
    p.add_argument("--voice", help="only clips of this voice id (59) or voice name (busm1)")
    p.add_argument("--json", action="store_true", help="print the list as one JSON object")
    p.set_defaults(func=cmd_ls)

    p = sub.add_parser("info", help="a clip's header, takes and the .evt records that name it")
    _add_root(p)
    p.add_argument("clip", help="clip name, e.g. 501_59_busm1_Warn_n")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("decode", help="decode one take to a WAV file")
    _add_root(p)
    p.add_argument("clip", help="CLIP or CLIP:TAKE (take index from 0; default 0)")
    p.add_argument("-o", "--output", type=Path, required=True, help="output .wav")
    p.set_defaults(func=cmd_decode)

    p = sub.add_parser("export", help="decode every take of a bank to DIR/<clip>/<take>.wav")
    _add_root(p)
    p.add_argument("-o", "--output", type=Path, required=True, help="output directory")
    p.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default: min(2, CPUs)); 1 = in this process",
    )
    p.add_argument("--event", type=int, help="only clips of this event number")
    p.add_argument("--voice", help="only clips of this voice id or name")
    p.set_defaults(func=cmd_export)

    for name, what in (("replace", "replace one take"), ("add-take", "add a take to a clip")):
        p = sub.add_parser(
            name,
            help=f"{what} (encoded as EA-XMA2) and write a new install",
            description=f"{what.capitalize()}: the audio is resampled to the clip's sample rate, mixed "
            "to its channel count, encoded as EA-XMA2 (codec 3, the game's) and a new install is written "
            "with the bank's .dat/.hdr/.sth archives rebuilt; every other take is kept byte for byte. "
            "Console acceptance of barkbus's XMA2 is not verified.",
        )
        _add_root(p)
        p.add_argument("clip", help="clip name, e.g. 501_59_busm1_Warn_n")
        if name == "replace":
            p.add_argument("take", type=int, help="take index (from 0)")
        p.add_argument("audio", type=Path, help="the new line (WAV, FLAC, ...)")
        p.add_argument("-o", "--output", type=Path, required=True, help="new install root (must not exist)")
        p.add_argument("--bitrate", type=float, default=64.0, help="kbit/s per channel (default 64)")
        p.set_defaults(func=cmd_edit, edit=name)


# ---------------------------------------------------------------------------------------------


def cmd_edit(args: argparse.Namespace) -> int:
    """``skate replace`` / ``skate add-take``: re-encode a line as EA-XMA2 into a new install."""
    import numpy as np
    import soundfile as sf
    from scipy.signal import resample_poly

    from audio.games.skate.formats.edit import edited_clips, encode_take, write_edited_install

    if not args.bitrate > 0:
        raise InputError(f"--bitrate must be a positive number of kbit/s, got {args.bitrate}")
    inst, bank = _open(args)
    with inst:
        clip = bank.clip(args.clip)
        like = clip.takes[0] if clip.takes else None
        sample_rate = like.sample_rate if like is not None else 36_000
        channels = like.channels if like is not None else 1
        try:
            x, file_sample_rate = sf.read(args.audio, dtype="float64", always_2d=True)
        except sf.LibsndfileError as exc:
            raise InputError(f"{args.audio}: not an audio file soundfile can read ({exc})") from None
        x = x.mean(axis=1, keepdims=True) if channels == 1 or x.shape[1] != channels else x
        if x.shape[1] != channels:
            x = np.repeat(x, channels, axis=1)
        if int(file_sample_rate) != sample_rate:
            from math import gcd

            g = gcd(int(file_sample_rate), sample_rate)
            x = resample_poly(x, sample_rate // g, int(file_sample_rate) // g, axis=0)
        take = encode_take(x.astype(np.float32), sample_rate, args.bitrate)
        if args.edit == "replace":
            specs = edited_clips(inst, args.bank, clip.name, replace=(args.take, take))
        else:
            specs = edited_clips(inst, args.bank, clip.name, add=take)
        path = write_edited_install(Path(args.root), args.output, args.bank, specs, inst)
    count = next(len(t) for n, _, t in specs if n == clip.name)
    print(f"{path}: {clip.name} now has {count} takes ({x.shape[0] / sample_rate:.2f} s new line, EA-XMA2)")
    return 0


def _open(args: argparse.Namespace) -> tuple[SkateInstall, SpeechBank]:
    from audio.games.skate.formats.install import SkateInstall

    inst = SkateInstall.open(args.root)
    return inst, inst.bank(args.bank)


def _filter(clips: Iterable[Clip], event: int | None, voice: str | None, bank: SpeechBank) -> list[Clip]:
    """The clips of ``event`` and ``voice`` (id or name); a voice or event the bank does not
    have is an :class:`InputError` with the closest names."""
    clips = list(clips)
    if voice is not None:
        known = {str(c.voice_id) for c in clips} | {c.voice_name for c in clips if c.voice_name}
        if voice not in known:
            raise InputError(f"--voice {voice}: no such voice in {bank.path}{did_you_mean(voice, known)}")
    if event is not None and all(c.event != event for c in clips):
        events = sorted({c.event for c in clips})
        raise InputError(
            f"--event {event}: no clip of that event in {bank.path} (events {events[0]}..{events[-1]})"
        )
    out = []
    for c in clips:
        if event is not None and c.event != event:
            continue
        if voice is not None and not (voice == str(c.voice_id) or voice == c.voice_name):
            continue
        out.append(c)
    return out


def cmd_index(args: argparse.Namespace) -> int:
    """Open and index a bank; print clips, takes, events, headers, problems and the time."""
    t0 = time.perf_counter()
    inst, bank = _open(args)
    with inst:
        clips = bank.clips
        events = bank.events
        dt = time.perf_counter() - t0
        seconds = sum(t.duration for c in clips for t in c.takes)
        print(f"{bank.path}")
        print(
            f"  clips {len(clips)}  takes {bank.take_count}  headers {len(bank.headers)}  "
            f"events {len(events.events)} (bank {events.bank}, sub-bank {events.sub_bank})  "
            f"voices {len(bank.voice_ids())}  audio {seconds / 3600:.2f} h"
        )
        print(f"  indexed in {dt * 1e3:.1f} ms")
        for p in bank.problems[:20]:
            print(f"  problem: {p}")
        if len(bank.problems) > 20:
            print(f"  ... {len(bank.problems) - 20} more problems")
    return 0


def cmd_ls(args: argparse.Namespace) -> int:
    """List clips."""
    inst, bank = _open(args)
    with inst:
        clips = _filter(bank.clips, args.event, args.voice, bank)
        if args.json:
            import json

            rows = [
                {
                    "name": c.name,
                    "id": c.hdr_id,
                    "takes": len(c.takes),
                    "seconds": sum(t.duration for t in c.takes),
                }
                for c in clips
            ]
            print(json.dumps({"bank": str(bank.path), "clips": rows}, separators=(",", ":")))
            return 0
        for c in clips:
            secs = sum(t.duration for t in c.takes)
            hid = "-" if c.hdr_id is None else str(c.hdr_id)
            print(f"{c.name:40s} id {hid:>5s}  takes {len(c.takes):2d}  {secs:7.2f} s")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Show one clip."""
    inst, bank = _open(args)
    with inst:
        c = bank.clip(args.clip)
        print(f"{c.name}: event {c.event}, voice {c.voice_id} ({c.voice_name or 'generic'}), line {c.line!r}")
        print(f"  .dat {c.entry.path}: {c.dat_size} bytes at {c.entry.offset}")
        h = c.header
        if h is None:
            print("  no .hdr")
        else:
            print(f"  .hdr id {h.id}, flags 0x{h.flags:02X}, takes {h.take_count}, history {h.history_len}")
        bits = bank.voice_bits(c.voice_id)
        if bits:
            print(f"  voice bits: type 0x{bits[0]:X}, variant 0x{bits[1]:X}")
        for t in c.takes:
            print(
                f"  take {t.index:2d}: offset {t.offset:8d} size {t.size:8d} codec {t.codec} "
                f"{t.channels} ch {t.sample_rate} Hz {t.num_samples} samples ({t.duration:.2f} s)"
            )
        names = {x.hdr_id: x.name for x in bank.clips if x.hdr_id is not None}
        for ev in bank.events.events:
            for k, rec in enumerate(ev.records):
                if c.hdr_id is not None and any(r.clip_id == c.hdr_id for r in rec.clips):
                    seq = ", ".join(names.get(r.clip_id, f"<missing {r.clip_id}>") for r in rec.clips)
                    vals = " ".join(f"w{f}&0x{v:X}" for f, v in zip(ev.fields, rec.values))
                    print(
                        f"  event {ev.id} {ev.name} record {k}: weight {rec.weight}, p {rec.probability}%, "
                        f"mode {rec.mode}, [{vals}] -> {seq}"
                    )
    return 0


def _write_wav(path: Path, pcm: np.ndarray, sample_rate: int) -> None:
    import numpy as np

    from audio.core.outputs import write_audio

    write_audio(path, np.asarray(pcm, np.float32).reshape(len(pcm), -1), sample_rate)


def cmd_decode(args: argparse.Namespace) -> int:
    """Decode one take."""
    from audio.core.outputs import check_outputs, is_stdio

    check_outputs({"-o": (args.output, "audio")})
    name, _, take = args.clip.partition(":")
    inst, bank = _open(args)
    with inst:
        pcm, sample_rate = bank.decode_take(bank.clip(name), int(take or 0))
        _write_wav(args.output, pcm, sample_rate)
        print(
            f"{args.output}: {len(pcm)} samples at {sample_rate} Hz ({len(pcm) / sample_rate:.2f} s)",
            file=sys.stderr if is_stdio(args.output) else sys.stdout,
        )
    return 0


_WORKER: dict[str, SkateInstall | SpeechBank] = {}


def _worker_init(root: str, prefix: str) -> None:
    from audio.games.skate.formats.install import SkateInstall

    inst = SkateInstall.open(root)
    _WORKER["install"], _WORKER["bank"] = inst, inst.bank(prefix)


def _export_clip(name: str, out_dir: str) -> tuple[str, int, list[str]]:
    """Decode every take of one clip (in a worker); returns (clip, takes written, errors)."""
    from audio.games.skate.formats.install import SpeechBank

    bank = _WORKER["bank"]
    assert isinstance(bank, SpeechBank)
    c = bank.clip(name)
    errors, written = [], 0
    for t in c.takes:
        try:
            pcm, sample_rate = bank.decode_take(c, t.index)
        except FormatError as exc:
            errors.append(f"{c.name}:{t.index}: {exc}")
            continue
        _write_wav(Path(out_dir) / c.name / f"{t.index}.wav", pcm, sample_rate)
        written += 1
    return name, written, errors


def cmd_export(args: argparse.Namespace) -> int:
    """Decode a whole bank (or a filtered part) in parallel."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    from audio.games.skate.formats.install import SkateInstall

    inst, bank = _open(args)
    with inst:
        clips = _filter(bank.clips, args.event, args.voice, bank)
        total = sum(len(c.takes) for c in clips)
    args.output.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    written = 0
    t0 = time.perf_counter()
    with tqdm(total=total, unit="take", desc="export", file=sys.stderr, disable=None) as bar:
        if args.jobs <= 1:
            _worker_init(str(args.root), args.bank)
            results = (_export_clip(c.name, str(args.output)) for c in clips)
            for _name, n, errs in results:
                written += n
                errors += errs
                bar.update(n + len(errs))
            worker_install = _WORKER.pop("install")
            _WORKER.pop("bank")
            assert isinstance(worker_install, SkateInstall)
            worker_install.close()
        else:
            with ProcessPoolExecutor(
                args.jobs, initializer=_worker_init, initargs=(str(args.root), args.bank)
            ) as pool:
                futures = [pool.submit(_export_clip, c.name, str(args.output)) for c in clips]
                for f in as_completed(futures):
                    name, n, errs = f.result()
                    written += n
                    errors += errs
                    bar.update(n + len(errs))
    for e in errors[:20]:
        print(f"error: {e}", file=sys.stderr)
    print(
        f"wrote {written} of {total} takes to {args.output} in {time.perf_counter() - t0:.1f} s"
        + (f"; {len(errors)} failed" if errors else "")
    )
    return 1 if errors else 0


_OUT_NAMES = {
    2: "out2 ped near clip",
    3: "out3 ped far clip",
    4: "out4 guard near",
    5: "out5 guard far",
    6: "out6 guard radio",
    13: "out13 stream HPF",
    14: "out14 stream LPF",
    15: "out15 env send ped",
    16: "out16 env send guard",
    17: "out17 env send radio",
    21: "out21 echo send",
    22: "out22 echo HPF",
    23: "out23 echo LPF",
}
_OUT_GROUPS = (
    ("main level (0..32767)", (2, 3, 4, 5, 6)),
    ("sends (linear)", (15, 16, 17, 21)),
    ("filter cutoffs (Hz)", (13, 14, 22, 23)),
)
_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)))
_MARKERS = ("o", "s", "^", "D", "v")


def _same_curves(curves: MixCurves, outs: tuple[int, ...]) -> list[list[int]]:
    """Outputs grouped by identical curves (same points), in ``outs`` order."""
    groups: list[list[int]] = []
    for o in outs:
        c = curves.outputs[o]
        for g in groups:
            if curves.outputs[g[0]] == c:
                g.append(o)
                break
        else:
            groups.append([o])
    return groups


def curves_figure(curves: MixCurves) -> Figure:
    """The mix curves over distance (one line per distinct curve, identical outputs share a line
    and a legend entry; knots marked) and the three PEAK curves over azimuth, each in its panel."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from audio.games.skate.speech.mixcurves import PEAK_CENTRE, PEAK_GAIN, PEAK_Q

    fig = Figure(figsize=(15, 8.5))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 3)
    d = np.linspace(0, 80, 401)
    for ax, (title, outs) in zip(axes[0], _OUT_GROUPS):
        for k, group in enumerate(_same_curves(curves, outs)):
            c = curves.outputs[group[0]]
            ax.plot(
                d,
                [c(x) for x in d],
                ls=_STYLES[k % len(_STYLES)],
                color=f"C{k}",
                lw=1.6,
                label=" = ".join(_OUT_NAMES[o] for o in group),
            )
            ax.plot(c.xs, c.ys, ls="none", marker=_MARKERS[k % len(_MARKERS)], color=f"C{k}", ms=4)
        ax.set(title=title, xlabel="distance (m)")
        if "Hz" in title:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7.5)
    az = range(0, 32768, 64)
    for k, (ax, curve, what) in enumerate(
        zip(axes[1], (PEAK_CENTRE, PEAK_GAIN, PEAK_Q), ("PEAK centre (Hz)", "PEAK gain (linear)", "PEAK Q"))
    ):
        ax.plot([a * 360 / 65536 for a in az], [curve(a) for a in az], color=f"C{k}", label=what)
        ax.plot(np.array(curve.xs) * 360 / 65536, curve.ys, ls="none", marker="o", ms=4, color=f"C{k}")
        ax.set(title=f"{what}: the game's curve", xlabel="folded azimuth (deg, 0 front, 180 behind)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7.5)
    fig.suptitle(
        "Skate 3 speech voice curves (level/send/filter: barkbus defaults, not the game's tables; "
        "markers are the curves' points)"
    )
    fig.tight_layout()
    return fig


def cmd_curves(args: argparse.Namespace) -> int:
    """Plot the mix curves (defaults or a scenario's overrides) and the PEAK curves."""
    import tomllib

    from audio.core.outputs import atomic_path, check_writable
    from audio.games.skate.speech.mixcurves import MixCurves

    mix: Any = {}
    if args.scenario:
        try:
            doc = tomllib.loads(args.scenario.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(f"{args.scenario}: cannot read the scenario ({exc.strerror})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(str(args.scenario), None, f"not valid TOML: {exc}") from None
        skate = doc.get("skate", {})
        mix = skate.get("mix", {}) if isinstance(skate, dict) else None
    if not isinstance(mix, dict):
        raise ScenarioError(str(args.scenario), "skate.mix", "expected a table of output curves")
    curves = MixCurves.from_dict(mix, str(args.scenario or "<defaults>"), "skate.mix")
    check_writable(args.output)
    with atomic_path(args.output) as tmp:
        curves_figure(curves).savefig(tmp, dpi=100, format="png")
    print(f"wrote {args.output}")
    return 0


def cmd_tuning(args: argparse.Namespace) -> int:
    """Validate a tuning file and write it back in full."""
    from audio.core.outputs import check_outputs, is_stdio, open_output
    from audio.games.skate.speech.tuning import dump_tuning, load_tuning
    from audio.games.skate.system import DEMO_TUNING

    check_outputs({"-o": (args.output, "text")})
    tuning = load_tuning(args.file or DEMO_TUNING)
    text = dump_tuning(tuning)
    with open_output(args.output or "-") as fh:
        fh.write(text)
    if args.output is not None and not is_stdio(args.output):
        print(f"wrote {args.output}", file=sys.stderr)
    return 0
