"""The ``barkbus`` command line (also ``python -m audio``).

Subcommands: ``demo`` (the main job: render the embedded demo installs), ``render``
(scenarios and captures to any audio format libsndfile writes), ``graph`` (list, show and plot
DSP graphs), ``live`` (real-time audition with OSC and the TUI, :mod:`audio.port.live`),
``batch`` (seeds on Dask and the variety report), and one command group per registered game
(:mod:`audio.games`): ``skate`` (Skate 3's living-world speech banks, events and mix curves),
``sylpheed`` (Project Sylpheed's chatter tables and ``.slb`` banks), ``starlancer``
(Starlancer's ``.dte`` mission scripts, ``.hog`` archives and ``.ut`` speech) and ``radiata``
(Radiata Stories' ``.rmf`` talk packets and voice table).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

# Before NumPy loads: barkbus never needs multi-threaded BLAS, and idle BLAS worker threads
# spinning on a small machine compete with the render and audio threads.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from audio import __version__  # noqa: E402
from audio.core.clock import RENDER_BLOCK  # noqa: E402  (numpy-free, like the rest of this header)
from audio.core.errors import BarkbusError, InputError  # noqa: E402

__all__ = ["main", "run", "build_parser"]

_GROUPS = (
    (
        "live",
        "audio.port.live",
        "play in real time (PortAudio or --no-audio), with OSC control and/or the TUI",
    ),
    (
        "profile",
        "audio.live.profiler.cli",
        "open the profiler page over a finished run (a live capture or a render's decision log)",
    ),
    ("batch", "audio.offline.batch.cli", "run scenarios over many seeds on Dask and report speech variety"),
    (
        "encode",
        "audio.offline.encode_cli",
        "encode audio in a game codec (XMA2, EA-XMA2, XAS1, PCM16, PS-ADPCM, the games' own)",
    ),
)
"""Command groups of the core rooms as (command, module with ``register(subparsers)``, one-line
help); each registered game adds its own (``Game.cli``, ``Game.cli_help``). A group's module is
imported only when its command is chosen, so ``barkbus --help`` loads no codec, numba or Dask."""


_EPILOG = """examples:
  barkbus demo -o out/demo.wav                 render every game's embedded demo install
  barkbus render audio/offline/demo/basic.toml -o out/basic.wav --log out/basic.jsonl
  barkbus render --replay out/live-capture.jsonl -o out/replay.wav
  barkbus graph plot skate_stream_voice -o out/voice.png
"""


def _add_render_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        help="audio file to write; the extension picks the format, any libsndfile writes "
        "(.wav, .flac, .ogg, .aiff, .caf, .au, .w64, .rf64, .mp3); '-' writes WAV to standard output",
    )
    p.add_argument("--seed", type=_seed, help="scenario seed, 0..2^63-1 (overrides the file's)")
    p.add_argument(
        "--block",
        type=_positive_int,
        help=f"engine block in samples (output does not depend on it; default {RENDER_BLOCK})",
    )
    p.add_argument(
        "--stems",
        type=Path,
        metavar="DIR",
        help="also write one file per bus into DIR (every bus that carries voices, and master), "
        "in the format of -o",
    )
    p.add_argument(
        "--log", type=Path, metavar="JSONL", help="write every decision as JSON lines ('-': stdout)"
    )
    p.add_argument(
        "--capture", type=Path, metavar="JSONL", help="write every posted event, for --replay ('-': stdout)"
    )
    p.add_argument(
        "--timeline", type=Path, metavar="PNG", help="draw who spoke what, when (.png, .svg, .pdf; none: PNG)"
    )
    p.add_argument(
        "--spectrogram", type=Path, metavar="PNG", help="draw a spectrogram of the output (as --timeline)"
    )
    p.add_argument("--layout", choices=["stereo", "5.1"], help="output layout (overrides the scenario's)")
    p.add_argument("--subtype", default=None, help="soundfile subtype (default PCM_16; e.g. FLOAT, PCM_24)")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary and no progress bar")
    p.add_argument("-v", "--verbose", action="store_true", help="add every system's per-event detail")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 1 if a voice fault was logged, a sample clipped or the output is silent "
        "(after writing everything)",
    )


_OUTPUT_NOTE = (
    "Every output is checked before any work (two outputs on one file, a format or a place that "
    "cannot be written: one line, exit 2); it is written under a temporary name and renamed when "
    "complete, a link is followed, a device or FIFO written through. Missing folders are created."
)


def _outputs(args: argparse.Namespace) -> Any:
    """The render's streamed outputs, every output checked before any work."""
    from audio.offline.render import Outputs

    out = Outputs(
        audio=args.output,
        stems_dir=args.stems,
        capture=getattr(args, "capture", None),
        subtype=args.subtype,
        others={
            "--log": (args.log, "text"),
            "--timeline": (args.timeline, "picture"),
            "--spectrogram": (args.spectrogram, "picture"),
        },
    )
    out.check()
    return out


def _finish_render(res: Any, args: argparse.Namespace) -> int:
    import json

    from audio.core.outputs import atomic_path, is_stdio, picture_format
    from audio.offline.render import summary_json, summary_text, write_log

    if args.log:
        write_log(args.log, res.decisions)
    if args.timeline:
        from audio.offline.timeline import timeline_png

        with atomic_path(args.timeline) as tmp:
            timeline_png(
                res.decisions,
                tmp,
                res.duration,
                res.voices,
                res.sample_rate,
                title=f"{res.scenario}, seed {res.seed}",
                fmt=picture_format(args.timeline),
            )
    if args.spectrogram:
        from audio.offline.plots import plot_spectrogram

        with atomic_path(args.spectrogram) as tmp:
            plot_spectrogram(
                res.audio,
                res.sample_rate,
                tmp,
                f"{res.scenario}, seed {res.seed}",
                picture_format(args.spectrogram),
            )
    outs = (
        args.output,
        args.stems,
        args.log,
        args.timeline,
        args.spectrogram,
        getattr(args, "capture", None),
    )
    stream = sys.stderr if any(is_stdio(o) for o in outs) else sys.stdout
    if args.json:
        summary = summary_json(res, args.output)
        summary["wrote"] = [str(o) for o in outs if o]
        print(json.dumps(summary, separators=(",", ":")), file=stream)
    elif not args.quiet:
        if not args.verbose:
            res.system_summaries = {}
        print(summary_text(res, args.output), file=stream)
        for extra in outs[1:]:
            if extra:
                print(f"  wrote {extra}", file=stream)
    problems = [f"{res.faults} voice faults"] if res.faults else []
    if res.clipped:
        problems.append(f"{res.clipped} clipped samples (first at {res.first_clip / res.sample_rate:.3f} s)")
    if res.silent:
        problems.append("an all-silent output")
    if args.strict and problems:
        print(f"barkbus: error: {', '.join(problems)} (--strict)", file=sys.stderr)
        return 1
    return 0


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {v}")
    return v


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= v < 2**63:
        raise argparse.ArgumentTypeError(f"expected a seed in 0..2^63-1, got {v}")
    return v


def _scenario(path: Path, args: argparse.Namespace):
    """Load a scenario with the command line's --seed and --layout applied."""
    from audio.offline.scenario import load_scenario

    scn = load_scenario(path, args.seed)
    if args.layout:
        scn.layout = args.layout
    return scn


def cmd_render(args: argparse.Namespace) -> int:
    from audio.offline.render import render_replay, render_scenario

    if args.replay:
        if args.scenario:
            raise InputError("give either a SCENARIO or --replay CAPTURE, not both")
        outputs = _outputs(args)
        res = render_replay(
            args.replay,
            block=args.block,
            progress=not args.quiet,
            outputs=outputs,
            keep_audio=bool(args.spectrogram),
        )
    else:
        if not args.scenario:
            raise InputError("render needs a SCENARIO file (or --replay CAPTURE); see barkbus render --help")
        scn = _scenario(args.scenario, args)
        res = render_scenario(
            scn,
            block=args.block,
            progress=not args.quiet,
            outputs=_outputs(args),
            keep_audio=bool(args.spectrogram),
        )
    return _finish_render(res, args)


def cmd_demo(args: argparse.Namespace) -> int:
    from audio.core.outputs import is_stdio
    from audio.offline.render import render_scenario
    from audio.offline.scenario import demo_names, demo_scenario

    names = [n for n in demo_names() if n != "basic"] if args.which == "all" else [args.which]
    out = args.output or Path("out/demo.wav")
    rc = 0
    for name in names:
        path = demo_scenario(name)
        if not path.is_file():
            print(f"demo {name!r} is not installed ({path} missing)", file=sys.stderr)
            rc = 1
            continue
        sub = argparse.Namespace(**vars(args))
        if len(names) > 1 and is_stdio(out):
            raise InputError(
                "-o -: the demo renders one file per game; give --which GAME for standard output"
            )
        sub.output = out if len(names) == 1 else out.with_name(f"{out.stem}-{name}{out.suffix}")
        for k in ("log", "timeline", "spectrogram", "capture"):
            v = getattr(args, k)
            if v is not None and len(names) > 1 and not is_stdio(v):
                setattr(sub, k, v.with_name(f"{v.stem}-{name}{v.suffix}"))
        if args.stems and len(names) > 1:
            sub.stems = args.stems / name
        scn = _scenario(path, args)
        res = render_scenario(
            scn,
            block=args.block,
            progress=not args.quiet,
            outputs=_outputs(sub),
            keep_audio=bool(args.spectrogram),
        )
        rc = max(rc, _finish_render(res, sub))
    return rc


def cmd_graph(args: argparse.Namespace) -> int:
    from audio.dsp.graph import NODE_KINDS, available_graphs, load_graph

    if args.action == "list":
        if args.json:
            import json

            specs = [load_graph(name) for name in available_graphs()]
            rows = [{"name": s.name, "kind": s.kind, "doc": s.doc} for s in specs]
            print(json.dumps({"graphs": rows}, separators=(",", ":")))
            return 0
        for name in available_graphs():
            spec = load_graph(name)
            print(f"{name:24s} {spec.kind:7s} {spec.doc}")
        return 0
    if not args.name:
        raise InputError(f"graph {args.action} needs a graph NAME (one of: {', '.join(available_graphs())})")
    spec = load_graph(args.name)
    if args.action == "show":
        print(f"{spec.name} ({spec.kind}) from {spec.path}\n  {spec.doc}")
        for n in spec.nodes:
            ps = ", ".join(f"{k}={v:g}" for k, v in n.params.items())
            route = f" -> {n.to}" if n.to else ""
            print(f"  {n.id:10s} {n.kind:5s} in={n.input or '-':10s} {ps}{route}")
            print(f"             {NODE_KINDS[n.kind].doc}")
        for c in spec.curves:
            print(f"  curve {c}: x={list(spec.curves[c].x)} y={list(spec.curves[c].y)}")
        if spec.ducker is not None:
            from audio.offline.plots import ducker_text

            print(f"  ducker     on the sends into this bus: {ducker_text(spec.ducker)}")
        return 0
    from audio.core.outputs import atomic_path, check_outputs, picture_format
    from audio.offline.plots import plot_graph

    out = args.output or Path(f"{spec.name}.png")
    check_outputs({"-o": (out, "picture")})
    with atomic_path(out) as tmp:
        plot_graph(spec, tmp, fmt=picture_format(out))
    print(f"wrote {out}")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with barkbus's error style: one line, one prefix, the usage only on --help."""

    def error(self, message: str) -> NoReturn:
        print(f"barkbus: error: {self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _games():
    from audio.games import all_games

    return all_games()


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``barkbus`` parser for the command line ``argv`` (without the program name).

    Only the command group ``argv`` chooses is imported and registered in full; the others are
    listed with their one-line help. ``argv=None`` registers every group.
    """
    command: object = _ALL if argv is None else _command(argv)
    p = _Parser(
        prog="barkbus",
        description="barkbus: a real-time audio middleware emulator for in-game speech ("
        + ", ".join(g.title for g in _games() if g.needs_install)
        + "). Renders scenarios deterministically, plays them live, and serves ports over "
        "Python and OSC.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"barkbus {__version__}")
    p.add_argument("--debug", action="store_true", help="print the traceback of an error, not just its line")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser(
        "demo",
        help="render the embedded demo installs (the main job)",
        description="Render the bundled demo scenarios (one per game) from "
        "the demo installs shipped in the games' own formats, print a summary. Every output "
        "gets a per-game suffix (out-skate.wav, cap-skate.jsonl...). " + _OUTPUT_NOTE,
    )
    from audio.offline.demos import demo_names

    d.add_argument(
        "--which",
        choices=[*demo_names(), "all"],
        default="all",
        help="which demo (default: all the games' demos)",
    )
    _add_render_args(d)
    d.set_defaults(func=cmd_demo, quick_exit=True)

    r = sub.add_parser(
        "render",
        help="render a scenario or a capture to audio (any format libsndfile writes)",
        description="Render SCENARIO.toml ('-': standard input) offline. The same scenario and seed "
        "give a byte-identical file for any --block. --replay re-renders a capture "
        "(from --capture or a live run; '-': standard input) exactly. " + _OUTPUT_NOTE,
    )
    r.add_argument("scenario", nargs="?", type=Path, help="scenario TOML file")
    r.add_argument("--replay", type=Path, metavar="CAPTURE", help="re-render a capture (JSON lines)")
    _add_render_args(r)
    r.set_defaults(func=cmd_render, quick_exit=True)

    g = sub.add_parser(
        "graph",
        help="list, show or plot DSP graphs (graphs/*.toml)",
        description="Inspect the DSP graph files. 'plot' draws the nodes, routing and, for "
        "the stream voice, the PEAK head-shadow curves and responses as a PNG.",
    )
    g.add_argument("action", choices=["list", "show", "plot"])
    g.add_argument("name", nargs="?", help="graph name (e.g. skate_stream_voice)")
    g.add_argument(
        "-o", "--output", type=Path, help="picture for plot (.png, .svg, .pdf; none: PNG; default NAME.png)"
    )
    g.add_argument("--json", action="store_true", help="list: print the graphs as one JSON object")
    g.set_defaults(func=cmd_graph)

    for name, help_, get in _lazy_groups():
        if name != command and command is not _ALL:
            sub.add_parser(name, help=help_, add_help=False)  # listed; loaded when chosen
            continue
        try:
            get()(sub)
        except ImportError as exc:  # a game module that cannot load must not take the CLI down
            print(f"barkbus: {name} unavailable: {exc}", file=sys.stderr)
    return p


_ALL = object()
"""``build_parser(None)``: every command group loaded (documentation, tests)."""


def _lazy_groups() -> list[tuple[str, str, Any]]:
    """(command, one-line help, what returns its ``register``) for the core groups, then the games."""
    out: list[tuple[str, str, Any]] = [
        (name, help_, lambda m=mod: importlib.import_module(m).register) for name, mod, help_ in _GROUPS
    ]
    out += [(g.name, g.cli_help, lambda g=g: g.load("cli")) for g in _games() if g.cli is not None]
    return out


def _command(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option (None if none)."""
    for a in argv:
        if a == "--":
            return None
        if not a.startswith("-"):
            return a
    return None


def run() -> NoReturn:
    """The console script (and ``python -m audio``): :func:`main`, then, after ``demo`` and
    ``render``, a quick exit. Those commands leave no thread running and every file committed,
    and tearing down the interpreter with numba's compiled code loaded took 0.2-0.3 s of a
    1.4 s demo; streams are flushed and the ``atexit`` handlers run first."""
    argv, debug = _take_debug(sys.argv[1:])
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.debug = debug
    rc = _execute(parser, args)
    if getattr(args, "quick_exit", False):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # the reader left (a closed pipe): nothing more to say
            pass
        atexit._run_exitfuncs()
        os._exit(rc)
    sys.exit(rc)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 run-time failure, 2 bad input).

    Every error barkbus raises on purpose is one line on stderr (its file, field or offset and
    what was expected); ``--debug`` adds the traceback.
    """
    argv, debug = _take_debug(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.debug = debug
    return _execute(parser, args)


def _take_debug(argv: list[str]) -> tuple[list[str], bool]:
    """``--debug`` anywhere on the line (before or after the subcommand), taken out."""
    head = argv[: argv.index("--")] if "--" in argv else argv
    if "--debug" not in head:
        return list(argv), False
    rest = argv[len(head) :]
    return [a for a in head if a != "--debug"] + rest, True


def _execute(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the parsed command; its exit status, each deliberate error as one line."""
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BarkbusError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"barkbus: error: {exc}", file=sys.stderr)
        return exc.exit_status
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as exc:
        if args.debug:  # a file named on the command line: bad input, one line
            traceback.print_exc()
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"barkbus: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `barkbus skate ls | head`: the reader left; not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        kept = getattr(args, "kept_on_interrupt", "nothing: partial files were removed")
        print(f"barkbus: interrupted; kept {kept}", file=sys.stderr)
        return 130
