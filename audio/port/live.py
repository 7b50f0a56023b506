"""``barkbus live``: play a voice system in real time (device or null output), optionally
driven by OSC or the interactive TUI, and write a capture that ``barkbus render --replay``
turns into the identical WAV.

The command sits in the port room because it composes a port (:mod:`audio.port.api`), its OSC
server and the live room's device and TUI (:mod:`audio.live`); the live room never imports the
port.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import logging.handlers
import queue
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

from audio.core.clock import BLOCK, SAMPLE_RATE
from audio.core.errors import BarkbusError

__all__ = ["StopSignals", "cmd_live", "main", "register"]


def register(subparsers: Any) -> None:
    """Add the ``live`` subcommand to an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "live",
        help="play in real time (PortAudio or --no-audio), with OSC control and/or the TUI",
        description="Render a voice system in real time through PortAudio (sounddevice) with 256-sample "
        "blocks, or through a null output paced by the clock (--no-audio). Events come from a "
        "scenario, OSC (--osc) or the keyboard (--tui). The capture and the record are streamed to "
        "disk as the run goes (a kill loses at most the last second); Ctrl-C, SIGTERM or SIGHUP end "
        "the run and write the metrics; `barkbus render --replay CAPTURE` reproduces it bit for bit.",
    )
    from audio.games import all_games
    from audio.offline.demos import demo_names

    games = all_games()
    p.add_argument(
        "--game",
        default="tone",
        choices=[g.name for g in games],
        help="voice system (default: tone, test tones needing no game data): "
        + ", ".join(f"{g.name} ({g.title})" for g in games),
    )
    p.add_argument("--install", default="demo", help='game install folder or "demo" (default: demo)')
    p.add_argument("--seed", type=int, help="seed (default: the scenario's, else 0)")
    p.add_argument(
        "scenario_pos",
        nargs="?",
        type=Path,
        metavar="SCENARIO",
        help="scenario file to play in real time (its engine, world and events)",
    )
    p.add_argument("--scenario", type=Path, help="the same as the positional SCENARIO")
    p.add_argument(
        "--demo",
        choices=demo_names(),
        help="play a bundled demo scenario (a game's demo install, or basic: no game)",
    )
    p.add_argument(
        "--seconds", type=float, help="stop after this many seconds (default: scenario end or Ctrl-C)"
    )
    p.add_argument(
        "--device", help="output device index or name (see --list-devices; default: system default)"
    )
    p.add_argument("--list-devices", action="store_true", help="list PortAudio devices and exit")
    p.add_argument(
        "--no-audio", action="store_true", help="null output: render in real time without a device"
    )
    p.add_argument("--ahead", type=int, default=2, help="blocks rendered ahead of the callback (default 2)")
    p.add_argument(
        "--rate",
        dest="sample_rate",
        metavar="HZ",
        type=int,
        default=SAMPLE_RATE,
        help=f"sample rate, Hz (default {SAMPLE_RATE})",
    )
    p.add_argument("--block", type=int, default=BLOCK, help=f"block size, samples (default {BLOCK})")
    p.add_argument("--osc", action="store_true", help="accept OSC control (see audio.port.osc for addresses)")
    p.add_argument("--osc-host", default="127.0.0.1", help="OSC bind address (default 127.0.0.1)")
    p.add_argument(
        "--osc-port", type=int, default=9000, help="OSC UDP port (default 9000; 0 = any free port)"
    )
    p.add_argument("--tui", action="store_true", help="interactive keyboard audition (curses)")
    p.add_argument(
        "--capture",
        type=Path,
        help="stream the capture (JSON lines) here as events arrive (flushed 4 times a second)",
    )
    p.add_argument("--record", type=Path, help="also stream the rendered audio here (float32 WAV)")
    p.add_argument(
        "--allow",
        type=Path,
        action="append",
        metavar="DIR",
        help="let OSC/port events open files under DIR too (repeatable; default: the demo "
        "installs, the game install and the scenario's folder)",
    )
    p.add_argument(
        "--metrics-json", type=Path, help="write the timing metrics (JSON) here at the end ('-': stdout)"
    )
    from audio.live.profiler.cli import add_live_arguments

    add_live_arguments(p)
    p.set_defaults(func=cmd_live)


def _device(value: str | None) -> int | str | None:
    if value is None:
        return None
    return int(value) if value.lstrip("-").isdigit() else value


class StopSignals:
    """SIGTERM and SIGHUP end the run the way Ctrl-C does.

    While :meth:`armed` (the run's waiting loop or the TUI) a signal raises KeyboardInterrupt
    in the main thread; otherwise it is only noted in ``got`` (checked by the waiting loop), so
    a signal during start-up or while the outputs are written never cuts them short.
    """

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __init__(self) -> None:
        self.got: int | None = None
        self._armed = False
        self._old: dict[int, Any] = {}

    def __enter__(self) -> Self:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for name in self.SIGNALS:
                sig = getattr(signal, name, None)
                if sig is not None:
                    self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()

    def _handle(self, signum: int, frame: Any) -> None:
        first = self.got is None
        self.got = signum
        if self._armed and first:
            self._armed = False
            raise KeyboardInterrupt

    def armed(self) -> _Armed:
        return _Armed(self)

    @property
    def name(self) -> str:
        import signal

        return signal.Signals(self.got).name if self.got is not None else ""


class _Armed:
    def __init__(self, sig: StopSignals) -> None:
        self.sig = sig

    def __enter__(self) -> None:
        self.sig._armed = self.sig.got is None

    def __exit__(self, *exc: object) -> bool:
        self.sig._armed = False
        return exc[0] is KeyboardInterrupt


def _writable(args: argparse.Namespace) -> str | None:
    """None if every output can be written (missing folders are created), else the problem."""
    from audio.core.outputs import check_outputs, is_stdio

    for label, p in (("--capture", args.capture), ("--record", args.record)):
        if is_stdio(p):
            return f"{label} -: a live {label[2:]} is rewritten as it grows and cannot go to standard output"
    try:
        check_outputs(
            {
                "--capture": (args.capture, "text"),
                "--record": (args.record, "text"),
                "--metrics-json": (args.metrics_json, "text"),
            }
        )
    except BarkbusError as exc:
        return str(exc)
    for p in (args.capture, args.record):
        if p is not None:
            p.parent.mkdir(parents=True, exist_ok=True)
    return None


def _open_port(args: argparse.Namespace) -> tuple[Any, Any]:
    """The port (scenario, demo or game) and its stop condition; PortError/ValueError if bad."""
    from audio.port.api import open_scenario, open_system

    allow = [str(a) for a in args.allow or []]
    if args.scenario is not None:
        port, duration = open_scenario(
            args.scenario, args.seed, sample_rate=args.sample_rate, block=args.block, allow=allow
        )
        if args.seconds is None:
            return port, lambda: port.now >= duration
        return port, None
    port = open_system(
        game=args.game,
        install=args.install,
        seed=args.seed or 0,
        sample_rate=args.sample_rate,
        block=args.block,
        allow=allow,
    )
    return port, None


def _check_args(args: argparse.Namespace) -> str | None:
    if args.block < 1 or args.block > 16384:
        return f"--block must be 1..16384 samples, got {args.block}"
    if args.sample_rate < 8000 or args.sample_rate > 384000:
        return f"--rate must be 8000..384000 Hz, got {args.sample_rate}"
    if args.ahead < 1 or args.ahead > 64:
        return f"--ahead must be 1..64 blocks, got {args.ahead}"
    if args.seed is not None and args.seed < 0:
        return f"--seed must be >= 0, got {args.seed}"
    if args.seconds is not None and not (0 < args.seconds < 1e7):
        return f"--seconds must be > 0, got {args.seconds}"
    if args.tui and not (sys.stdin.isatty() and sys.stdout.isatty()):
        return "--tui needs a terminal (standard input and output); use --osc or a scenario"
    return _writable(args)


def cmd_live(args: argparse.Namespace) -> int:
    """Run the ``live`` command; returns the exit code."""
    from audio.live.device import list_devices, rescan_devices
    from audio.port.events import PortError

    if args.list_devices:
        try:
            rescan_devices()
            print(list_devices() or "no audio devices")
        except OSError as exc:
            print(f"PortAudio not available: {exc}", file=sys.stderr)
            return 1
        return 0
    if args.scenario is None:
        args.scenario = args.scenario_pos
    problem = _check_args(args)
    if problem is not None:
        print(f"barkbus: error: {problem}", file=sys.stderr)
        return 2
    if args.demo is not None:
        if args.scenario is not None:
            print("barkbus: error: give either a SCENARIO or --demo, not both", file=sys.stderr)
            return 2
        from audio.offline.scenario import demo_scenario

        args.scenario = demo_scenario(args.demo)
    try:
        port, stop_when = _open_port(args)
    except (BarkbusError, PortError, OSError, ValueError) as exc:
        print(f"barkbus: error: {exc}", file=sys.stderr)
        return 2
    with StopSignals() as signals, _logging_off_the_audio_threads():
        return _run(args, port, stop_when, signals)


@contextlib.contextmanager
def _logging_off_the_audio_threads() -> Iterator[None]:
    """Route barkbus's log records through a queue to a listener thread, so a render or OSC
    thread never blocks writing to a slow or full stderr (a pipe nobody reads)."""
    logger = logging.getLogger("barkbus")
    q: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    handler = logging.handlers.QueueHandler(q)
    stream = logging.StreamHandler(sys.stderr)
    stream.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    listener = logging.handlers.QueueListener(q, stream)
    old = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    listener.start()
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = old
        listener.stop()


def _run(args: argparse.Namespace, port: Any, stop_when: Any, signals: StopSignals) -> int:
    from audio.live.device import CaptureWriter, LiveSettings, NoDeviceError, RecordWriter

    settings = LiveSettings(
        sample_rate=port.sample_rate,
        block=args.block,
        ahead=args.ahead,
        device=_device(args.device),
        no_audio=args.no_audio,
        keep_records=False,
    )
    server = None
    if args.osc:
        from audio.port.osc import OscServer

        try:
            server = OscServer(port, args.osc_host, args.osc_port).start()
        except OSError as exc:
            print(f"barkbus: error: cannot bind OSC {args.osc_host}:{args.osc_port}: {exc}", file=sys.stderr)
            return 2
        print(f"OSC listening on {server.address[0]}:{server.address[1]}", flush=True)
    from audio.live.profiler.cli import serve_live

    try:
        profiler = serve_live(args, port)
    except BarkbusError as exc:
        print(f"barkbus: error: {exc}", file=sys.stderr)
        if server is not None:
            server.stop()
        return 2
    if profiler is not None:
        reach = "" if profiler.loopback else " (reachable beyond this machine: the URL's token is required)"
        print(f"profiler: {profiler.url}{reach}", flush=True)
    capture = record = None
    if args.capture is not None:
        header = {
            "source": "live",
            "sample_rate": port.sample_rate,
            "block": args.block,
            "start_sample": port.now_samples,
            **port.capture_header(),
        }
        capture = CaptureWriter(args.capture, header)
        port.bus.on_post(capture.record)
    if args.record is not None:
        record = RecordWriter(args.record, port.sample_rate)
    try:
        player = port.play(settings, on_block=record.push if record is not None else None)
    except NoDeviceError as exc:
        print(
            f"barkbus: error: no audio output: {exc} (use --no-audio to run without a device)",
            file=sys.stderr,
        )
        _close_outputs(capture, record, server, 0)
        for out in (args.capture, args.record):  # nothing was played: leave no empty files
            if out is not None:
                with contextlib.suppress(OSError):
                    out.unlink()
        if profiler is not None:
            profiler.stop()
        return 1
    posted = [0]

    def count(rec: Any) -> None:
        posted[0] += 1

    port.bus.on_post(count)
    args.events_posted = posted
    if capture is not None:
        capture.samples = lambda: player.samples_rendered
    streaming = f", capture streaming to {args.capture}" if capture else ""
    print(f"live: {port.game} running{streaming}", flush=True)
    with signals.armed():
        if args.tui:
            from audio.live.tui import run_tui

            run_tui(port, player, seconds=args.seconds, osc=server)
        else:
            player.wait(args.seconds, stop_when=lambda: signals.got is not None or (stop_when or bool)())
    if profiler is not None:
        profiler.stop()
    return _finish(args, port, player, server, capture, record, signals)


def _close_outputs(capture: Any, record: Any, server: Any, samples: int) -> list[str]:
    problems = []
    if server is not None:
        server.stop()
    for out, close in ((capture, lambda: capture.close(samples)), (record, lambda: record.close())):
        if out is not None:
            try:
                close()
            except OSError as exc:
                problems.append(str(exc))
    return problems


def _finish(
    args: argparse.Namespace,
    port: Any,
    player: Any,
    server: Any,
    capture: Any,
    record: Any,
    signals: StopSignals,
) -> int:
    """Stop, then write the metrics and close the capture and record (whatever stopped the run)."""
    from audio.live.device import format_metrics

    status = 0
    try:
        port.stop()
    except RuntimeError as exc:  # the render thread died: still write what we have
        print(f"barkbus: error: {exc}", file=sys.stderr)
        status = 1
    problems = _close_outputs(capture, record, server, player.samples_rendered)
    if signals.got is not None:
        print(f"stopped by {signals.name}", flush=True)
    metrics = player.metrics()
    faults = port.faults
    metrics["faults"] = faults.count
    metrics["disabled_systems"] = dict(port.engine.disabled)
    print(format_metrics(metrics), flush=True)
    disabled = "".join(f"; system {n} disabled" for n in metrics["disabled_systems"])
    print(f"faults: {faults.summary()}{disabled}")
    total = args.events_posted[0]
    inbox = metrics["events_posted"]
    print(
        f"events: {total} posted on the bus ({inbox} from the port, OSC or keyboard, {total - inbox} from "
        f"the scenario and the systems), {metrics['events_dropped']} dropped (inbox full)"
    )
    metrics["bus_events_posted"] = total
    if server is not None:
        s = server.stats
        print(
            f"OSC: {s.received} datagrams ({s.undecodable} undecodable), {s.messages} messages: accepted "
            f"{s.accepted}, queries {s.queries}, rejected {s.rejected - s.undecodable} (refused files "
            f"{s.refused}), dropped {s.dropped}, errors {s.errors}"
        )
        metrics["osc"] = {
            k: getattr(s, k)
            for k in (
                "received",
                "undecodable",
                "messages",
                "accepted",
                "rejected",
                "dropped",
                "errors",
                "refused",
                "queries",
            )
        }
    if args.metrics_json is not None:
        from audio.core.outputs import open_output

        try:
            with open_output(args.metrics_json) as fh:
                fh.write(json.dumps(metrics, indent=1, sort_keys=True) + "\n")
        except OSError as exc:
            problems.append(str(exc))
    if record is not None:
        print(
            f"rendered audio written to {args.record} ({record.samples} samples"
            + (", stopped at the 4 GiB WAV limit)" if record.full else ")")
        )
    if capture is not None:
        n = player.samples_rendered
        print(f"capture written to {args.capture} ({capture.written} events, {n} samples)")
    for p in problems:
        print(f"barkbus: error: {p}", file=sys.stderr)
    return status or (1 if problems else 0)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m audio.port.live live ...``)."""
    parser = argparse.ArgumentParser(prog="barkbus")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
