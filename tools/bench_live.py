#!/usr/bin/env python3
"""Live benchmark: event-to-audio latency and callback time under load.

For each voice count N (default 1, 16, 64) it plays the test-tone system live (PortAudio
device, or --no-audio) while a sender thread sends OSC messages over UDP at --rate
messages per second (default 100): refreshes of N quiet background lines (each 2 s long,
re-fired every 1.5 s, so N voices always play), a hard-onset probe line every 0.25 s, and
listener moves for the rest. Reported per N:

- callback time p50 / p99 / max (us, and % of the block budget, 5.33 ms at 48 kHz / 256),
  deadline misses (callbacks over budget), ring underruns, PortAudio underflow flags,
  callbacks vs the number the clock expects;
- render time per block p50 / p99 / max (us) in the render thread;
- latency from the OSC message's arrival at the server to the first non-silent sample of
  the probe line handed to the device (p50 / p99 / max, ms); ``+ device`` adds the
  stream's reported output latency.

With ``--compare off,page-nice`` (or ``--profiler``: ``off,page-nice0,page-nice,page-pin``) every
voice count runs once per variant, interleaved ``--repeats`` times (off, page, off, page, ...:
the machine's load drifts alike over all), and the variants are printed side by side: the
median of each quantity over the repeats, its spread (min-max) and the ratio of medians.
Variants: ``off`` (no profiler), ``publisher`` (the snapshot publisher alone), ``server``
(publisher and page server, no client), ``reader`` (a WebSocket client in another process
reading every update, no browser), ``page-nice0`` / ``page-nice`` (the page open in headless
Chromium driven by selenium, its server process at nice 0 / at the default +10; ``page`` means
``page-nice``), ``page-pin`` (as ``page-nice`` with Chromium pinned to other CPUs than the
render thread: CPU competition separated from anything else), ``chromium`` (headless Chromium
on about:blank, no profiler). Each run records the 1-minute load average at its start, the CPU
(% of one core) of the audio process, of the page's server process and of the browser over the
run, and the publisher's CPU on the render thread (``profiler_ms_per_s``: ms per second of
audio, meters, snapshots and feed). The coordinator's A/B: ``python tools/bench_live.py
--voices 64 --seconds 20 --profiler --repeats 3`` (through the JACK dummy device).

Example: ``python tools/bench_live.py --seconds 10`` (JACK dummy:
``jackd --no-realtime -d dummy -r 48000 -p 256 &``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audio.core.engine import Engine
from audio.games.tone.system import DEFAULT_GRAPH as DEFAULT_TONE_GRAPH
from audio.games.tone.system import ToneOn, ToneSystem
from audio.live.device import LiveSettings, format_metrics
from audio.port.api import VoicePort
from audio.port.osc import OscServer, build_message

PROBE_EVERY_S = 0.25
PROBE_LEVEL = 0.9
BG_LEVEL = 0.004
BG_LINE_S = 2.0
BG_REFRESH_S = 1.5


class OnsetDetector:
    """Render-thread hook: the first sample of each probe line above ``threshold``."""

    def __init__(self, records: list[dict[str, Any]], threshold: float) -> None:
        self.records = records
        self.threshold = threshold
        self.seen = 0
        self.pending: list[int] = []
        self.onsets: dict[int, int] = {}  # probe post sample -> onset sample

    def __call__(self, start: int, block: np.ndarray) -> None:
        recs = self.records
        while self.seen < len(recs):
            r = recs[self.seen]
            self.seen += 1
            if r.get("kind") == "tone.on" and str(r.get("speaker", "")).startswith("probe"):
                self.pending.append(int(r["at"]))
        if not self.pending:
            return
        loud = np.flatnonzero(np.abs(block).max(axis=1) > self.threshold)
        if loud.size:
            at = self.pending[0]
            hits = loud[start + loud >= at]
            if hits.size:
                self.onsets[at] = start + int(hits[0])
                self.pending.pop(0)


def sender(target: tuple[str, int], n_voices: int, rate: float, seconds: float, stop: threading.Event) -> int:
    """Send the message schedule; returns how many were sent."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    period = 1.0 / rate
    t0 = time.perf_counter()
    next_bg = [i * BG_REFRESH_S / max(1, n_voices) for i in range(n_voices)]
    next_probe = 0.5
    k = 0
    while not stop.is_set():
        due = t0 + k * period
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        t = k * period
        if t >= seconds:
            break
        i = int(np.argmin(next_bg)) if n_voices else -1
        if t >= next_probe:
            msg = build_message("/tone/on", f"probe{k}", f"p{k}", 1000.0, 0.05, PROBE_LEVEL, 0.0)
            next_probe += PROBE_EVERY_S
        elif i >= 0 and next_bg[i] <= t:
            msg = build_message("/tone/on", f"bg{i}", f"bg{i}", 110.0 + 23.0 * i, BG_LINE_S, BG_LEVEL)
            next_bg[i] += BG_REFRESH_S
        else:
            msg = build_message("/listener", 0.0, 1.7, 0.0, float(k % 360))
        sock.sendto(msg, target)
        k += 1
    return k


def tree_cpu_s(pid: int | None) -> float:
    """CPU time (user + system, s) of process ``pid`` and all its descendants so far (Linux
    ``/proc``; 0 elsewhere or without a pid)."""
    if pid is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for d in Path("/proc").glob("[0-9]*"):
        try:
            fields = (d / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parent[int(d.name)] = int(fields[1])
        cpu[int(d.name)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += cpu.get(p, 0.0)
        todo.extend(c for c, pp in parent.items() if pp == p)
    return total


CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


class Page:
    """The profiler page open in a headless Chromium (selenium + chromium-driver)."""

    def __init__(self, url: str) -> None:
        import shutil
        import tempfile

        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.TemporaryDirectory()
        opts = webdriver.ChromeOptions()
        opts.binary_location = shutil.which("chromium") or "chromium"
        for f in (*CHROME_FLAGS, f"--user-data-dir={self.profile.name}"):
            opts.add_argument(f)
        self.driver = webdriver.Chrome(
            service=Service(shutil.which("chromedriver") or "chromedriver"), options=opts
        )
        self.driver.get(url)

    def pid(self) -> int | None:
        """The chromedriver process (Chromium runs under it)."""
        proc = getattr(self.driver.service, "process", None)
        return int(proc.pid) if proc is not None else None

    def connected(self) -> bool:
        from selenium.webdriver.common.by import By

        return bool(self.driver.find_element(By.ID, "conn").text == "connected")

    def close(self) -> None:
        self.driver.quit()
        self.profile.cleanup()


VARIANTS = {
    "off": "no profiler",
    "publisher": "the snapshot publisher on the render thread, no server",
    "server": "publisher + page server, no client",
    "reader": "publisher + server + a WebSocket client in another process that reads every update "
    "(no browser)",
    "page-nice0": "the profiler page open in headless Chromium, its server process at nice 0",
    "page-nice": "the profiler page open in headless Chromium, its server process at the default nice",
    "page-pin": "as page-nice, with Chromium pinned to other CPUs than the render thread's (taskset)",
    "chromium": "headless Chromium on about:blank, no profiler (the browser's own CPU)",
}
PAGES = ("page-nice0", "page-nice", "page-pin")
"""The variants that open the page in headless Chromium (``page`` on the command line is
``page-nice``)."""


def open_pinned(url: str, player: Any) -> tuple[Page, str]:
    """The page in a Chromium pinned away from ``player``'s render thread (Linux CPU affinity,
    what ``taskset`` sets): the render thread on the first CPU this process may use, Chromium
    (started from this thread, so its processes inherit the mask) on the others. Returns the
    page and what was pinned; with one CPU, nothing is."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return Page(url), "not pinned (one CPU)"
    render = player._threads[0].native_id  # the render thread (LivePlayer starts it first)
    os.sched_setaffinity(render, {cpus[0]})
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(cpus[1:]))  # this thread only: the browser's processes inherit it
    try:
        return Page(url), f"render thread on CPU {cpus[0]}, Chromium on CPU {','.join(map(str, cpus[1:]))}"
    finally:
        os.sched_setaffinity(0, mine)


class PublisherClock:
    """The publisher's CPU time on the render thread (its ``on_block``, snapshots and feed
    included): wraps the hook in ``port.block_hooks``."""

    def __init__(self, port: Any, publisher: Any) -> None:
        self.ns = 0
        hooks = port.block_hooks
        inner = publisher.on_block

        def timed(start: int, block: np.ndarray) -> None:
            t0 = time.thread_time_ns()
            inner(start, block)
            self.ns += time.thread_time_ns() - t0

        hooks[hooks.index(inner)] = timed


READER = """
import asyncio, signal, sys
from tornado.websocket import websocket_connect
count = 0
def done(*_):
    print(count, flush=True)
    raise SystemExit(0)
signal.signal(signal.SIGTERM, done)
async def main():
    global count
    conn = await websocket_connect(sys.argv[1])
    while await conn.read_message() is not None:
        count += 1
asyncio.run(main())
done()
"""
"""The reading client: tornado only (starts fast), prints how many messages it read."""


class Reader:
    """A WebSocket client in another process reading every update (:data:`READER`)."""

    def __init__(self, url: str) -> None:
        import subprocess

        ws = url.replace("http://", "ws://", 1).split("?")[0].rstrip("/") + "/ws"
        self.proc = subprocess.Popen([sys.executable, "-c", READER, ws], stdout=subprocess.PIPE, text=True)
        self.messages = 0

    def pid(self) -> int | None:
        return int(self.proc.pid)

    def connected(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        import subprocess

        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=10)
            self.messages = int(out.strip() or 0)
        except (subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
            self.proc.communicate()


def run_one(n_voices: int, args: argparse.Namespace, variant: str = "off") -> dict[str, Any]:
    engine = Engine(sample_rate=48_000, block=256, seed=0)
    tones = ToneSystem(args.graph, max_seconds=BG_LINE_S + 1)
    engine.add_system(tones)
    tones.prepare(
        [ToneOn(freq_hz=110.0 + 23.0 * i, seconds=BG_LINE_S, level=BG_LEVEL) for i in range(n_voices)]
        + [ToneOn(freq_hz=1000.0, seconds=0.05, level=PROBE_LEVEL, fade_ms=0.0)]
    )
    port = VoicePort(engine, game="tone", inbox_size=4096)
    port.warm_up()
    server = OscServer(port, udp_port=0).start()
    settings = LiveSettings(device=args.device, no_audio=args.no_audio, ahead=args.ahead)
    records: list[dict[str, Any]] = []
    engine.bus.on_post(records.append)
    # a probe peaks at ~0.64 after the voice's centre pan; N quiet lines stay far below
    detector = OnsetDetector(records, threshold=0.3)
    profiler: Any = None
    clock: PublisherClock | None = None
    if variant in ("server", "reader", *PAGES):
        from audio.live.profiler.attach import start_profiler

        try:
            profiler = start_profiler(port, nice=0) if variant == "page-nice0" else start_profiler(port)
        except TypeError:  # a tree from before the niced server process (a baseline): nice 0 anyway
            profiler = start_profiler(port)
        clock = PublisherClock(port, profiler.publisher)
    elif variant == "publisher":
        from audio.live.profiler.attach import attach_publisher

        clock = PublisherClock(port, attach_publisher(port))
    load = os.getloadavg()[0]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    player = port.play(settings, on_block=detector, max_seconds=args.seconds + 30)
    browser: Page | Reader | None = None
    pinned = ""
    if variant == "page-pin" and profiler is not None:
        browser, pinned = open_pinned(profiler.url, player)
    elif variant in PAGES and profiler is not None:
        browser = Page(profiler.url)
    elif variant == "reader" and profiler is not None:
        browser = Reader(profiler.url)
    elif variant == "chromium":
        browser = Page("about:blank")
    server_pid = profiler.proc.pid if profiler is not None and profiler.proc is not None else None
    browser_cpu0 = tree_cpu_s(browser.pid()) if browser is not None else 0.0
    server_cpu0 = tree_cpu_s(server_pid)
    stop = threading.Event()
    sent = [0]
    th = threading.Thread(
        target=lambda: sent.__setitem__(0, sender(server.address, n_voices, args.rate, args.seconds, stop))
    )
    th.start()
    try:
        th.join()
        time.sleep(0.2)
    except KeyboardInterrupt:
        stop.set()
        th.join()
    finally:
        connected = browser.connected() if isinstance(browser, Reader) or variant in PAGES else False
        wall = time.perf_counter() - wall0
        cpu_audio = 100 * (time.process_time() - cpu0) / wall
        cpu_browser = 100 * (tree_cpu_s(browser.pid()) - browser_cpu0) / wall if browser is not None else 0.0
        cpu_server = 100 * (tree_cpu_s(server_pid) - server_cpu0) / wall
        port.stop()
        server.stop()
        if browser is not None:
            browser.close()
        if profiler is not None:
            profiler.stop()
    m = player.metrics()
    external = [r for r in records if r.get("origin") == "external"]
    played = player.cb.played_at()
    lat = []
    for rec, (at, recv_ns) in zip(external, player.posted):
        if rec.get("kind") != "tone.on" or not str(rec.get("speaker", "")).startswith("probe"):
            continue
        onset = detector.onsets.get(at)
        if onset is None:
            continue
        block_start = onset - onset % 256
        entry = played.get(block_start)
        if entry is None:
            continue
        lat.append((entry - recv_ns) / 1e6 + (onset - block_start) / 48.0)
    lat_a = np.array(lat) if lat else np.zeros(1)
    playing = len(engine.voices.playing())
    out = {
        "voices": n_voices,
        "seconds": args.seconds,
        "messages_sent": sent[0],
        "osc_received": server.stats.received,
        "osc_accepted": server.stats.accepted,
        "osc_rejected": server.stats.rejected,
        "osc_dropped": server.stats.dropped,
        "probes": len(lat),
        "latency_p50_ms": float(np.percentile(lat_a, 50)),
        "latency_p99_ms": float(np.percentile(lat_a, 99)),
        "latency_max_ms": float(lat_a.max()),
        "device_latency_ms": 1e3 * m["output_latency_s"],
        "voices_playing_at_end": playing,
        "variant": variant,
        "cpu_audio_pct": cpu_audio,
        "cpu_server_pct": cpu_server,
        "cpu_browser_pct": cpu_browser,
        "load_1min": load,
        "reader_messages": browser.messages if isinstance(browser, Reader) else 0,
        "page_connected": connected,
        "page_updates_sent": profiler.stats["sent"] if profiler is not None else 0,
        "page_updates_skipped": profiler.stats["skipped"] if profiler is not None else 0,
        "pinned": pinned,
        "profiler_ms_per_s": (clock.ns / 1e6 / (player.samples_rendered / 48_000.0))
        if clock is not None and player.samples_rendered
        else 0.0,
        **m,
    }
    out["callback_p99_pct_budget"] = 100 * m["callback_p99_us"] / m["budget_us"]
    return out


COMPARED = (
    ("callback_p50_us", "us"),
    ("callback_p99_us", "us"),
    ("callback_max_us", "us"),
    ("render_p99_us", "us"),
    ("deadline_misses", ""),
    ("underruns", ""),
    ("underflows", ""),
    ("latency_p99_ms", "ms"),
    ("cpu_audio_pct", "%"),
    ("cpu_server_pct", "%"),
    ("cpu_browser_pct", "%"),
    ("profiler_ms_per_s", "ms"),
    ("load_1min", ""),
)


def print_compare(n: int, args: argparse.Namespace, variants: list[str], runs: list[dict[str, Any]]) -> None:
    """The variants side by side: per quantity the median over the repeats, its spread
    (min-max) and the ratio of medians against the first variant."""
    by = {v: [r for r in runs if r["variant"] == v] for v in variants}
    reps = len(by[variants[0]])
    print(
        f"== {n} voices, {args.seconds:g} s per run, {args.rate:g} OSC msg/s, {reps} interleaved repeats; "
        f"median [min-max], ratio of medians against {variants[0]!r}"
    )
    for v in variants:
        print(f"  {v:<10} {VARIANTS[v]}")
    print(f"  {'':<20}" + "".join(f" {v:>28}" for v in variants))
    for key, _unit in COMPARED:
        cells = []
        base = float(np.median([r[key] for r in by[variants[0]]]))
        for v in variants:
            xs = [float(r[key]) for r in by[v]]
            med = float(np.median(xs))
            ratio = "" if v == variants[0] else (f" x{med / base:.2f}" if base else " -")
            cells.append(f"{med:.1f} [{min(xs):.1f}-{max(xs):.1f}]{ratio}")
        print(f"  {key:<20}" + "".join(f" {c:>28}" for c in cells))
    for v in (*PAGES, "reader"):
        if any(not r["page_connected"] for r in by.get(v, [])):
            print(f"  WARNING: a {v!r} run had no client connected at its end")
    for r in by.get("page-pin", [])[:1]:
        print(f"  page-pin: {r['pinned']}")
    served = [r for v in (*PAGES, "reader", "server") for r in by.get(v, [])]
    if served:
        sent = sum(r["page_updates_sent"] for r in served)
        skipped = sum(r["page_updates_skipped"] for r in served)
        print(f"  page updates sent {sent}, skipped (client busy) {skipped}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Live benchmark: OSC event-to-audio latency and callback time "
        "at 1, 16 and 64 voices under 100 OSC messages per second."
    )
    p.add_argument("--seconds", type=float, default=60.0, help="duration per voice count, s (default 60)")
    p.add_argument("--voices", default="1,16,64", help="comma-separated voice counts (default 1,16,64)")
    p.add_argument("--rate", type=float, default=100.0, help="OSC messages per second (default 100)")
    p.add_argument("--device", help="PortAudio output device (index or name; default: the default output)")
    p.add_argument(
        "--no-audio", action="store_true", help="null output paced by the clock instead of a device"
    )
    p.add_argument("--ahead", type=int, default=2, help="blocks rendered ahead of the callback (default 2)")
    p.add_argument("--graph", default=DEFAULT_TONE_GRAPH, help=f"voice graph (default {DEFAULT_TONE_GRAPH})")
    p.add_argument(
        "--profiler",
        action="store_true",
        help="the profiler A/B comparison: same as --compare off,page-nice0,page-nice,page-pin",
    )
    p.add_argument(
        "--compare",
        metavar="VARIANTS",
        help="run each voice count once per variant, interleaved (A B A B ...) --repeats times, and print "
        "them side by side with their spread and ratios; variants: "
        + "; ".join(f"{k} ({v})" for k, v in VARIANTS.items()),
    )
    p.add_argument(
        "--repeats", type=int, default=2, help="interleaved repeats per variant with --compare (default 2)"
    )
    p.add_argument("--json", type=Path, help="write the results (a list of dicts) here")
    args = p.parse_args(argv)
    if args.profiler and not args.compare:
        args.compare = "off," + ",".join(PAGES)
    variants = [v.strip() for v in (args.compare or "").split(",") if v.strip()]
    variants = ["page-nice" if v == "page" else v for v in variants]
    for v in variants:
        if v not in VARIANTS:
            p.error(f"--compare: unknown variant {v!r} (expected some of {', '.join(VARIANTS)})")
    if args.device is not None and args.device.isdigit():
        args.device = int(args.device)
    counts = [int(x) for x in args.voices.split(",") if x.strip()]
    results = []
    for n in counts:
        if variants:
            runs = [run_one(n, args, v) for _ in range(max(1, args.repeats)) for v in variants]
            results.extend(runs)
            print_compare(n, args, variants, runs)
            continue
        r = run_one(n, args)
        results.append(r)
        print(
            f"== {n} voices, {args.seconds:g} s, {args.rate:g} OSC msg/s ({r['messages_sent']} sent, "
            f"{r['osc_dropped']} dropped, {r['osc_rejected']} rejected)"
        )
        print(format_metrics(r))
        print(f"callback p99 = {r['callback_p99_pct_budget']:.2f}% of the budget")
        print(
            f"OSC -> first probe sample at the callback: p50 {r['latency_p50_ms']:.2f} ms, "
            f"p99 {r['latency_p99_ms']:.2f} ms, max {r['latency_max_ms']:.2f} ms over {r['probes']} probes "
            f"(+ device output latency {r['device_latency_ms']:.2f} ms)",
            flush=True,
        )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
