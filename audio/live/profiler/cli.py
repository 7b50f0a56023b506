"""Command-line side of the profiler: ``live``'s ``--profiler`` options and ``barkbus profile``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from audio.core.errors import BarkbusError

__all__ = ["add_live_arguments", "cmd_profile", "register", "serve_live"]

_BIND_HELP = (
    "serve the profiler page at [HOST:]PORT (default 127.0.0.1 and a free port; the URL is printed); "
    "a HOST other than loopback needs --profiler-token"
)


def add_live_arguments(p: argparse.ArgumentParser) -> None:
    """``--profiler [HOST:]PORT`` and ``--profiler-token`` for ``barkbus live``."""
    p.add_argument("--profiler", nargs="?", const="", metavar="[HOST:]PORT", help=_BIND_HELP)
    p.add_argument(
        "--profiler-token",
        metavar="TOKEN",
        help="secret the page's URL must carry (?token=TOKEN); required to bind beyond loopback",
    )


def serve_live(args: argparse.Namespace, port: Any) -> Any:
    """Before ``port.play``: a publisher on the port's blocks and the page's server (bound now,
    so a busy address fails before the run starts); None without ``--profiler``.
    ProfilerError if the address cannot be used."""
    if args.profiler is None:
        return None
    from audio.live.profiler.attach import start_profiler

    return start_profiler(port, args.profiler, args.profiler_token)


def register(subparsers: Any) -> None:
    """Add the ``profile`` subcommand."""
    p = subparsers.add_parser(
        "profile",
        help="open the profiler page over a finished run (a live capture or a render's decision log)",
        description="Serve the profiler page (the one `barkbus live --profiler` shows) over a finished "
        "run: a capture from `barkbus live --capture` is replayed (voices, levels, game panels and "
        "decisions, at 10 snapshots per second of run time); a decision log from `barkbus render --log` "
        "gives the decisions and the lines they start and end. Open the printed URL in a browser; "
        "Ctrl-C stops.",
    )
    p.add_argument("run", type=Path, metavar="CAPTURE|LOG", help="a capture (JSON lines) or a decision log")
    p.add_argument(
        "--bind", default="", metavar="[HOST:]PORT", help=_BIND_HELP.replace("--profiler-token", "--token")
    )
    p.add_argument("--token", metavar="TOKEN", help="secret the page's URL must carry (?token=TOKEN)")
    p.add_argument("--seconds", type=float, help="stop serving after this many seconds (default: Ctrl-C)")
    p.set_defaults(func=cmd_profile)


def cmd_profile(args: argparse.Namespace) -> int:
    """Run ``barkbus profile``; returns the exit status."""
    from audio.live.profiler.review import review_source
    from audio.live.profiler.server import ProfilerServer, parse_bind

    if not args.run.is_file():
        print(f"barkbus: error: {args.run}: no such file", file=sys.stderr)
        return 2
    try:
        host, number = parse_bind(args.bind)
        source = review_source(args.run)
        server = ProfilerServer(source, host, number, args.token)
    except (BarkbusError, OSError) as exc:
        print(f"barkbus: error: {exc}", file=sys.stderr)
        return 2
    server.start()
    print(
        f"profiler: {server.url} ({len(source.history.decisions)} decisions, {len(source.history.bars)} "
        f"voices, {source.duration:.2f} s)",
        flush=True,
    )
    try:
        t_end = None if args.seconds is None else time.monotonic() + args.seconds
        while t_end is None or time.monotonic() < t_end:
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
