"""``barkbus live``: play a voice system in real time (device or null output), optionally
driven by OSC or the interactive TUI, and write a capture that ``barkbus render --replay``
turns into the identical WAV.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from audio.core.clock import BLOCK, SAMPLE_RATE

__all__ = ["cmd_live", "main", "register"]


def register(subparsers: Any) -> None:
    """Add the ``live`` subcommand to an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "live",
        help="play in real time (PortAudio or --no-audio), with OSC control and/or the TUI",
        description="Render a voice system in real time through PortAudio (sounddevice) with 256-sample "
        "blocks, or through a null output paced by the clock (--no-audio). Events come from a "
        "scenario, OSC (--osc) or the keyboard (--tui). At the end (or Ctrl-C) the capture is "
        "written; `barkbus render --replay CAPTURE` reproduces the run bit for bit.",
    )
    from audio.games import all_games
    from audio.offline.scenario import demo_names

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
        "scenario_pos", nargs="?", type=Path, metavar="SCENARIO",
        help="scenario file to play in real time (its engine, world and events)",
    )
    p.add_argument("--scenario", type=Path, help="the same as the positional SCENARIO")
    p.add_argument(
        "--demo", choices=demo_names(),
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
    p.add_argument("--rate", type=int, default=SAMPLE_RATE, help=f"sample rate, Hz (default {SAMPLE_RATE})")
    p.add_argument("--block", type=int, default=BLOCK, help=f"block size, samples (default {BLOCK})")
    p.add_argument("--osc", action="store_true", help="accept OSC control (see audio.port.osc for addresses)")
    p.add_argument("--osc-host", default="127.0.0.1", help="OSC bind address (default 127.0.0.1)")
    p.add_argument(
        "--osc-port", type=int, default=9000, help="OSC UDP port (default 9000; 0 = any free port)"
    )
    p.add_argument("--tui", action="store_true", help="interactive keyboard audition (curses)")
    p.add_argument("--capture", type=Path, help="write the capture (JSON lines) here at the end")
    p.add_argument("--record", type=Path, help="also write the rendered audio (float32 WAV) here at the end")
    p.add_argument("--metrics-json", type=Path, help="write the timing metrics (JSON) here at the end")
    p.set_defaults(func=cmd_live)


def _device(value: str | None) -> int | str | None:
    if value is None:
        return None
    return int(value) if value.lstrip("-").isdigit() else value


def cmd_live(args: argparse.Namespace) -> int:
    """Run the ``live`` command; returns the exit code."""
    from audio.live.device import LiveSettings, NoDeviceError, format_metrics, list_devices, rescan_devices, write_capture
    from audio.port.api import open_scenario, open_system
    from audio.port.events import PortError

    if args.list_devices:
        try:
            rescan_devices()
            print(list_devices() or "no audio devices")
        except OSError as exc:
            print(f"PortAudio not available: {exc}", file=sys.stderr)
            return 1
        return 0
    stop_when = None
    if args.scenario is None:
        args.scenario = args.scenario_pos
    if args.demo is not None:
        if args.scenario is not None:
            print("give either a SCENARIO or --demo, not both", file=sys.stderr)
            return 2
        from audio.offline.scenario import demo_scenario
        args.scenario = demo_scenario(args.demo)
    try:
        if args.scenario is not None:
            port, duration = open_scenario(args.scenario, args.seed, block=args.block)
            if args.seconds is None:

                def stop_when() -> bool:
                    return port.now >= duration
        else:
            port = open_system(
                game=args.game,
                install=args.install,
                seed=args.seed or 0,
                sample_rate=args.rate,
                block=args.block,
            )
    except (PortError, OSError, ValueError) as exc:
        print(f"barkbus live: {exc}", file=sys.stderr)
        return 2
    settings = LiveSettings(
        sample_rate=port.sample_rate,
        block=args.block,
        ahead=args.ahead,
        device=_device(args.device),
        no_audio=args.no_audio,
        keep_blocks=args.record is not None,
    )
    server = None
    if args.osc:
        from audio.port.osc import OscServer

        try:
            server = OscServer(port, args.osc_host, args.osc_port).start()
        except OSError as exc:
            print(f"barkbus live: cannot bind OSC {args.osc_host}:{args.osc_port}: {exc}", file=sys.stderr)
            return 2
        print(f"OSC listening on {server.address[0]}:{server.address[1]}", flush=True)
    try:
        player = port.play(settings)
    except NoDeviceError as exc:
        print(f"barkbus live: {exc} (use --no-audio to run without a device)", file=sys.stderr)
        if server is not None:
            server.stop()
        return 3
    try:
        if args.tui:
            from audio.live.tui import run_tui

            run_tui(port, player, seconds=args.seconds, osc=server)
        else:
            player.wait(args.seconds, stop_when=stop_when)
    finally:
        port.stop()
        if server is not None:
            server.stop()
    metrics = player.metrics()
    print(format_metrics(metrics), flush=True)
    if server is not None:
        s = server.stats
        print(
            f"OSC: received {s.received}, accepted {s.accepted}, rejected {s.rejected}, dropped {s.dropped}"
        )
    if args.metrics_json is not None:
        args.metrics_json.write_text(json.dumps(metrics, indent=1, sort_keys=True), encoding="utf-8")
    if args.record is not None:
        import numpy as np
        import soundfile as sf

        audio = np.concatenate(player.rendered) if player.rendered else np.zeros((0, 2), np.float32)
        sf.write(args.record, audio, port.sample_rate, subtype="FLOAT")
        print(f"rendered audio written to {args.record} ({audio.shape[0]} samples)")
    if args.capture is not None:
        write_capture(args.capture, player.capture_header(**port.capture_header()), player.records)
        print(
            f"capture written to {args.capture} ({len(player.records)} events, {player.samples_rendered} samples)"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m audio.live.cli live ...``)."""
    parser = argparse.ArgumentParser(prog="barkbus")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
