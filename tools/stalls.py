#!/usr/bin/env python3
"""The stall cases of issue 20, each in its own process, with its wall time and peak RSS.

Each case is something a client or a long run could do to stall or exhaust the engine:

* ``plaza-1h``: the Skate plaza demo rendered for one hour (memory must stay flat);
* ``starlancer-1h``: the Starlancer demo mission for one hour with a chatty script of
  72,000 ``starlancer.say`` lines (one every 50 ms);
* ``talk-flood``: 300,000 ``radiata.talk`` posted at once (the queue is bounded);
* ``play-burst``: 10,000 ``play`` events in one block (voice stealing holds);
* ``nul-osc``: ``/event radiata.talk {"file": "town.rmf\\u0000"}`` over OSC (one fault);
* ``fifo-live``: ``barkbus live --no-audio`` asked over OSC to ``play`` a FIFO, then ended
  by ``--seconds`` (the run must end on time); ``fifo-live-device-sigterm``: the same on the
  audio device (JACK in CI), ended by SIGTERM.

Every case prints one JSON line: ``case``, ``seconds`` (wall), ``peak_rss_mb`` (the case
process's peak resident set, MB of 10**6 bytes) and what it observed.

    python tools/stalls.py                     # every case
    python tools/stalls.py talk-flood play-burst --json out.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASES: dict[str, Callable[[], dict[str, Any]]] = {}


def case(fn: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


def peak_rss_mb() -> float:
    """This process's peak resident set, MB: Linux's VmHWM, the high-water mark of this program
    image. ``ru_maxrss`` is not used: Linux carries it across fork and exec, so a case started by
    a large process (a long pytest session) would report its parent's size."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) * 1024 / 1e6, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6, 1)


def _outcomes(decisions: Any) -> dict[str, int]:
    return dict(Counter(f"{d.system}:{d.outcome}" for d in decisions).most_common(12))


@case
def plaza_1h() -> dict[str, Any]:
    from audio.offline.render import render_scenario
    from audio.offline.scenario import demo_scenario, load_scenario

    scn = dataclasses.replace(load_scenario(demo_scenario("skate")), duration=3600.0)
    res = render_scenario(scn, keep_audio=False)
    return {"decisions": len(res.decisions), "voices": res.voices_started, "faults": res.faults}


SPEECH = ("vip_res_002.ut", "ban_res_001.ut", "ms99_rel_001.ut", "ms99_nag_001.ut")


@case
def starlancer_1h() -> dict[str, Any]:
    from audio.offline.render import render_scenario
    from audio.offline.scenario import demo_scenario, load_scenario
    from audio.port.events import make_event

    scn = load_scenario(demo_scenario("starlancer"))
    chatty = [
        make_event(
            "starlancer.say",
            t=0.05 * i,
            speaker="ship:Naginata" if i % 2 else "ship:Reliant",
            speech=SPEECH[i % len(SPEECH)],
            mode="queued",
        )
        for i in range(1, 72_000)
    ]
    scn = dataclasses.replace(scn, duration=3600.0, events=[*scn.events, *chatty])
    res = render_scenario(scn, keep_audio=False)
    return {"decisions": len(res.decisions), "voices": res.voices_started, "faults": res.faults}


@case
def talk_flood() -> dict[str, Any]:
    from audio.games.radiata.events import Talk
    from audio.port.api import open_system

    port = open_system(game="radiata")
    accepted = 0
    for _ in range(300):  # as fast as a client can: 1000 talks per 256-sample block
        for _ in range(1000):
            accepted += port.post(Talk(file="town.rmf", packet=0), when="now")
        port.advance(256 / 48_000)
    system = port.engine.system("radiata.talk")
    return {
        "accepted": accepted,
        "queued": len(system.seq.queue),
        "disabled": dict(port.engine.disabled),
        "outcomes": _outcomes(port.engine.bus.decisions),
        "kept": len(port.engine.bus.decisions),
    }


@case
def play_burst() -> dict[str, Any]:
    import numpy as np
    import soundfile as sf

    from audio.core.world import EmitterMove
    from audio.offline.scenario import PlayEvent
    from audio.port.api import open_system

    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "burst.wav"
        sf.write(wav, np.full(48_000, 0.01, np.float32), 48_000)
        port = open_system(game="tone", allow=[tmp])
        raised = ""
        try:
            for i in range(8):
                port.post(EmitterMove(emitter=f"e{i}", position=(float(i), 0.0, 2.0), t=0.0))
            port.post(PlayEvent(emitter="e0", file=str(wav), t=0.0))
            port.advance(0.1)  # the file is loaded once
            for i in range(10_000):
                port.engine.bus.post(PlayEvent(emitter=f"e{i % 8}", file=str(wav), t=0.2))
            port.advance(0.2)
        except Exception as exc:  # the case reports what it saw
            raised = f"{type(exc).__name__}: {exc}"
        faults = Counter(
            str(d.detail.get("reason", ""))[:60] for d in port.engine.bus.decisions if d.outcome == "Fault"
        )
    return {
        "raised": raised,
        "disabled": dict(port.engine.disabled),
        "outcomes": _outcomes(port.engine.bus.decisions),
        "faults": dict(faults.most_common(3)),
    }


@case
def nul_osc() -> dict[str, Any]:
    from audio.port.api import open_system
    from audio.port.osc import OscServer, build_message

    port = open_system(game="radiata")
    server = OscServer(port, udp_port=0, drive_clock=True)
    msg = build_message("/event", "radiata.talk", json.dumps({"file": "town.rmf\u0000"}))
    server.handle_datagram(msg)
    port.advance(0.2)
    good = build_message("/event", "radiata.talk", json.dumps({"file": "town.rmf"}))
    server.handle_datagram(good)
    port.advance(0.2)
    server.stop()
    return {
        "disabled": dict(port.engine.disabled),
        "osc_rejected": server.stats.rejected,
        "outcomes": _outcomes(port.engine.bus.decisions),
    }


def _fifo_live(device: bool, sigterm: bool) -> dict[str, Any]:
    """``live`` asked over OSC to play a FIFO in an allowed folder, ended by ``--seconds 3``
    or by SIGTERM 3 s after the play; killed (and reported hung) after 30 s."""
    import signal

    from audio.port.osc import build_message

    with tempfile.TemporaryDirectory() as tmp:
        fifo = Path(tmp) / "stall.wav"
        os.mkfifo(fifo)
        cmd = [sys.executable, "-m", "audio", "live", "--osc", "--osc-port", "0", "--allow", tmp]
        cmd += ["--metrics-json", str(Path(tmp) / "metrics.json")]
        cmd += [] if device else ["--no-audio"]
        cmd += [] if sigterm else ["--seconds", "3"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with (Path(tmp) / "err").open("w") as err:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        t0 = time.monotonic()
        host, port = line.rsplit(" ", 1)[-1].strip().rsplit(":", 1)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        play = {"emitter": "e0", "file": str(fifo)}
        sock.sendto(build_message("/event", "play", json.dumps(play)), (host, int(port)))
        if sigterm:
            time.sleep(3.0)
            proc.send_signal(signal.SIGTERM)
        try:
            rc: int | str = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = "hung (killed after 30 s)"
        metrics = (Path(tmp) / "metrics.json").exists()
        tail = (Path(tmp) / "err").read_text(errors="replace")[-300:]
    live_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 1e6
    return {
        "exit": rc,
        "ended_after_s": round(time.monotonic() - t0, 1),
        "live_peak_rss_mb": round(live_rss, 1),
        "metrics": metrics,
        "stderr": tail,
    }


@case
def fifo_live() -> dict[str, Any]:
    return _fifo_live(device=False, sigterm=False)


@case
def fifo_live_device_sigterm() -> dict[str, Any]:
    return _fifo_live(device=True, sigterm=True)


def run_case(name: str) -> dict[str, Any]:
    """Run ``name`` in a child process; its JSON line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, __file__, "--child", name], cwd=ROOT, env=env, capture_output=True, text=True
    )
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"case": name, "seconds": round(time.monotonic() - t0, 1), "failed": out.stderr[-800:]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Run the issue-20 stall cases and report time and peak RSS.")
    p.add_argument("cases", nargs="*", choices=[*CASES, []], help="cases to run (default: all)")
    p.add_argument("--json", type=Path, help="also write the JSON lines here")
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        t0 = time.monotonic()
        got = CASES[a.child]()
        print(
            json.dumps(
                {
                    "case": a.child,
                    "seconds": round(time.monotonic() - t0, 1),
                    "peak_rss_mb": peak_rss_mb(),
                    **got,
                }
            )
        )
        return 0
    lines = [run_case(n) for n in (a.cases or list(CASES))]
    for rec in lines:
        print(json.dumps(rec), flush=True)
    if a.json:
        a.json.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
