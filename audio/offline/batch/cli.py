"""The ``barkbus batch`` command group (``register(subparsers)``).

``barkbus batch SCENARIO... --seeds A:B -o DIR [--workers N | --scheduler tcp://HOST:8786]
[--decisions-only] [--resume] [--chunk K]`` runs every (scenario, seed) on Dask;
``barkbus batch report DIR`` writes ``DIR/report/index.html`` with its CSV tables and plots.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from audio.core.errors import BarkbusError, InputError

__all__ = ["cmd_batch", "parse_seeds", "register", "resolve_scenarios"]

_EPILOG = """examples:
  barkbus batch audio/games/skate/demo/plaza.toml --seeds 0:1000 -o runs/ --decisions-only
  barkbus batch skate sylpheed --seeds 0:200 -o runs-full/ --workers 2       (demo names work too)
  barkbus batch plaza.toml --seeds 0:10000 -o runs/ --scheduler tcp://10.0.0.5:8786 --resume
  barkbus batch report runs/                                                 -> runs/report/index.html
"""


def parse_seeds(text: str) -> list[int]:
    """``A:B`` (A..B-1) or ``N`` (one seed); seeds are >= 0."""
    try:
        if ":" in text:
            a, b = (int(x) for x in text.split(":", 1))
            seeds = list(range(a, b))
        else:
            seeds = [int(text)]
    except ValueError:
        raise BarkbusError(f"--seeds: expected A:B (seeds A to B-1) or one seed N, got {text!r}") from None
    if not seeds or seeds[0] < 0:
        raise BarkbusError(f"--seeds {text!r}: give a non-empty range of seeds >= 0")
    return seeds


def resolve_scenarios(names: list[str]) -> dict[str, str]:
    """Scenario files (or demo names: skate, sylpheed, basic) -> {store key (file stem): absolute path}."""
    from audio.offline.scenario import demo_scenario

    out: dict[str, str] = {}
    for name in names:
        p = Path(name)
        if not p.is_file() and p.suffix == "" and "/" not in name:
            p = demo_scenario(name)
        if not p.is_file():
            raise BarkbusError(f"batch: no scenario file {name}")
        key = p.stem
        if key in out and out[key] != str(p.resolve()):
            raise BarkbusError(f"batch: two scenarios named {key!r} ({out[key]}, {p.resolve()}); rename one")
        out[key] = str(p.resolve())
    return out


def cmd_batch(args: argparse.Namespace) -> int:
    if args.scenario and args.scenario[0] == "report":
        return _cmd_report(args)
    if not args.seeds or not args.output:
        raise InputError("batch needs --seeds A:B and -o DIR (see barkbus batch --help)")
    if args.workers is not None and args.scheduler:
        raise InputError("give either --workers N (a LocalCluster) or --scheduler ADDRESS, not both")
    if args.shared_store and not args.scheduler:
        raise InputError("--shared-store goes with --scheduler (a LocalCluster's workers always write)")
    from audio.offline.batch.cluster import dashboard_note, open_client, run_batch
    from audio.offline.batch.store import BatchStore

    scenarios = resolve_scenarios(args.scenario)
    seeds = parse_seeds(args.seeds)
    with open_client(args.workers, args.scheduler, quiet=args.quiet) as client:
        print(dashboard_note(client), file=sys.stderr)
        s = run_batch(
            client,
            BatchStore(args.output),
            scenarios,
            seeds,
            decisions_only=args.decisions_only,
            resume=args.resume,
            chunk=args.chunk,
            progress=not args.quiet,
            workers_write=args.shared_store or not args.scheduler,
        )
    print(
        f"batch: {s.done} runs ok, {s.failed} failed, {s.skipped} already recorded -> {args.output}"
        f"\n  barkbus batch report {args.output}"
    )
    return 1 if s.failed else 0


def _cmd_report(args: argparse.Namespace) -> int:
    from audio.offline.batch.report import write_report

    if len(args.scenario) != 2:
        raise InputError("usage: barkbus batch report DIR [-o OUT] [--k K]")
    root = Path(args.scenario[1])
    if not (root / "runs").is_dir():
        raise BarkbusError(f"batch report: {root} holds no batch (no {root / 'runs'})")
    page = write_report(root, args.output, args.k)
    print(f"wrote {page}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``batch`` to the ``barkbus`` command line."""
    b = subparsers.add_parser(
        "batch",
        help="run scenarios over many seeds on Dask and report speech variety",
        description="Run every (scenario, seed) as Dask tasks (a LocalCluster, or a running cluster with "
        "--scheduler), store decisions and measurements as Parquet, then 'barkbus batch report "
        "DIR' writes play counts against the weights, take repeats, refusals, lines never "
        "played and loudness as CSV, PNG and one HTML page.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument(
        "scenario", nargs="+", metavar="SCENARIO", help="scenario TOML files or demo names; or 'report DIR'"
    )
    b.add_argument("--seeds", help="seeds A:B (A to B-1) or N")
    b.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="DIR",
        help="batch directory (report: output directory, default DIR/report)",
    )
    b.add_argument("--workers", type=int, help="LocalCluster workers (default: CPU count)")
    b.add_argument("--scheduler", metavar="tcp://HOST:8786", help="submit to a running Dask scheduler")
    b.add_argument(
        "--shared-store",
        action="store_true",
        help="with --scheduler: the workers see -o DIR at the same path (a shared file system), so each "
        "writes its own task files instead of sending its tables here (a LocalCluster always does)",
    )
    b.add_argument(
        "--decisions-only",
        action="store_true",
        help="no DSP: bus, clocks and systems only (same decisions, milliseconds per run)",
    )
    b.add_argument("--resume", action="store_true", help="continue DIR: skip every run already recorded")
    b.add_argument(
        "--chunk",
        type=int,
        metavar="K",
        help="seeds per task (default: about 8 tasks per worker thread, 10 to 200 seeds a task)",
    )
    b.add_argument("--k", type=int, default=3, help="report: repeat windows 1..K plays (default 3)")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(func=cmd_batch)
