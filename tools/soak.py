#!/usr/bin/env python3
"""Soak test: `barkbus live --no-audio --osc` under an OSC flood while faults are injected.

The run plays the Skate 3 demo install with every other take corrupted (their SNS block
flags overwritten: each one costs a voice and a ``decode`` fault), and the flood (only to
127.0.0.1, bounded by ``--seconds`` and ``--max-messages``) mixes valid messages (spawns,
speech values, moves, listener and emitter moves, ``play`` of a good file under an
``--allow`` folder) with malformed ones (random bytes, truncated messages, wrong types,
out-of-range values such as ``/skate/value 1 999`` and ``/sylpheed/phase 99``), files the
path policy must refuse (``/etc/passwd``, ``..`` out of the allowed folder, a symlink out of
it, a name with a NUL byte), a FIFO in the allowed folder (never opened: the loader opens
regular files only), a WAV that does not decode, bundles of 16 plays at once, and crafted
datagrams (a bundle nested thousands deep, a bundle with a lying element size). At the end it
stops the run with SIGTERM and reports:
messages sent by kind, received/accepted/rejected/dropped/errors (the server's own count),
faults logged, RSS at start and end, deadline misses and underruns, whether the engine
answered to the end, and whether the streamed capture replays to audio identical to the
streamed record.

    python tools/soak.py --seconds 20 --json soak.json
    python tools/soak.py --seconds 600 --rate 3000     # the 10-minute run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audio.port.osc import build_message

VOICES = ("busm1", "adtf2", "tenm1", "grn1", "sktm1", "secg1", "bum1")
VALUES = (1, 2, 3, 4, 6, 7, 10, 11, 12, 14, 17, 18, 19, 20, 22, 23, 25, 29, 49, 51, 53, 63, 64, 66)


# -- the fixture: a corrupted install, good and bad files ------------------------------------
def corrupt_install(dest: Path, every: int = 2) -> int:
    """Copy the Skate demo install to ``dest`` and break the SNS block flag of every
    ``every``-th take; returns how many takes were broken."""
    from audio.games.skate.formats.install import SkateInstall

    shutil.copytree(ROOT / "audio" / "games" / "skate" / "demo", dest)
    inst = SkateInstall.open(dest)
    bank = inst.bank()
    spots = [c.entry.offset + t.offset for c in bank.clips for t in c.takes if c.entry.compression == 0]
    path = Path(bank.path)
    inst.close()
    broken = spots[::every]
    with path.open("r+b") as fh:
        for at in broken:
            fh.seek(at)
            fh.write(b"\xff\xff\xff\xff")
    return len(broken)


def make_files(tmp: Path) -> dict[str, str]:
    """A good WAV and a corrupt one under ``allowed/``, a file outside it and a symlink out."""
    import soundfile as sf

    allowed, outside = tmp / "allowed", tmp / "outside"
    allowed.mkdir()
    outside.mkdir()
    t = np.arange(9600) / 48000.0
    sf.write(allowed / "good.wav", (0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32), 48000)
    (allowed / "bad.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt " + os.urandom(64))
    sf.write(outside / "secret.wav", np.zeros(480, np.float32), 48000)
    (allowed / "link.wav").symlink_to(outside / "secret.wav")
    os.mkfifo(allowed / "stall.wav")  # opening it would block: only regular files are opened
    return {
        "fifo": str(allowed / "stall.wav"),
        "nul": str(allowed / "good.wav") + "\u0000",
        "good": str(allowed / "good.wav"),
        "bad": str(allowed / "bad.wav"),
        "allowed": str(allowed),
        "dotdot": str(allowed / ".." / "outside" / "secret.wav"),
        "link": str(allowed / "link.wav"),
        "passwd": "/etc/passwd",
    }


# -- the flood ------------------------------------------------------------------------------
def nested_bundle(depth: int) -> bytes:
    """A bundle nested ``depth`` deep around one message (20 bytes a level)."""
    data = build_message("/skate/speed", 1.0)
    for _ in range(depth):
        data = b"#bundle\x00" + b"\x00" * 7 + b"\x01" + struct.pack(">i", len(data)) + data
    return data


class Flood:
    """Builds the mixed message stream and counts what it sent by kind."""

    def __init__(self, files: dict[str, str], seed: int) -> None:
        self.rng = random.Random(seed)
        self.files = files
        self.sent: dict[str, int] = {}
        self.crafted = [
            nested_bundle(3000),
            nested_bundle(9),
            b"#bundle\x00" + b"\x00" * 8 + struct.pack(">i", 10_000) + b"/x\x00\x00,\x00\x00\x00",
        ]

    def _count(self, kind: str) -> None:
        self.sent[kind] = self.sent.get(kind, 0) + 1

    def _valid(self) -> bytes:
        r = self.rng
        ped = r.randint(1, 8)
        pick = r.random()
        if pick < 0.05:
            return build_message(
                "/skate/spawn", ped, r.choice(VOICES), r.uniform(-8, 8), 0.0, r.uniform(1, 12)
            )
        if pick < 0.55:
            return build_message("/skate/value", ped, r.choice(VALUES))
        if pick < 0.80:
            return build_message("/skate/move", ped, r.uniform(-10, 10), 0.0, r.uniform(-10, 10))
        if pick < 0.86:
            return build_message("/listener", r.uniform(-2, 2), 1.7, r.uniform(-2, 2), r.uniform(-180, 180))
        if pick < 0.92:
            return build_message("/emitter", f"e{r.randint(0, 3)}", r.uniform(-5, 5), 1.0, r.uniform(1, 8))
        if pick < 0.96:
            return build_message("/skate/speed", r.uniform(0, 8))
        play = {"emitter": f"e{r.randint(0, 3)}", "file": self.files["good"], "gain": 0.5}
        return build_message("/event", "play", json.dumps(play))

    def _malformed(self) -> bytes:
        r = self.rng
        pick = r.randrange(8)
        if pick == 0:
            return r.randbytes(r.randint(0, 64))
        if pick == 1:
            return build_message("/skate/value", 1, 999)
        if pick == 2:
            return build_message("/sylpheed/phase", 99)
        if pick == 3:
            return build_message("/skate/value", "one", 2.5)
        if pick == 4:
            return build_message("/skate/move", 1, float("nan"), 0.0, 0.0)
        if pick == 5:
            return build_message("/tone/on", "ann", "x", 1e9)[:-3]
        if pick == 6:
            return build_message("/event", "skate.value", "[" * 5000)
        return build_message("/nowhere", 1, 2, 3)

    def _file(self) -> tuple[str, bytes]:
        kind = self.rng.choice(("bad", "passwd", "dotdot", "link", "fifo", "nul"))
        msg = build_message("/event", "play", json.dumps({"emitter": "e0", "file": self.files[kind]}))
        names = {"bad": "play_corrupt", "fifo": "play_fifo", "nul": "bad_name"}
        return names.get(kind, "refused"), msg

    def _burst(self) -> bytes:
        """A bundle of 16 plays of the good file (all in one block)."""
        play = build_message("/event", "play", json.dumps({"emitter": "e0", "file": self.files["good"]}))
        element = struct.pack(">i", len(play)) + play
        return b"#bundle\x00" + b"\x00" * 7 + b"\x01" + element * 16

    def next(self) -> bytes:
        """One datagram: 80% valid, 17% malformed, 2.5% file faults (a FIFO and a NUL name
        among them), 0.4% crafted, 0.1% a burst of 16 plays."""
        x = self.rng.random()
        if x < 0.001:
            self._count("play_burst")
            return self._burst()
        if x < 0.80:
            self._count("valid")
            return self._valid()
        if x < 0.97:
            self._count("malformed")
            return self._malformed()
        if x < 0.995:
            kind, msg = self._file()
            self._count(kind)
            return msg
        self._count("crafted")
        return self.rng.choice(self.crafted)


def rss_kib(pid: int) -> int:
    """Resident set size of ``pid`` (KiB) from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def ask(sock: socket.socket, target: tuple[str, int], address: str, timeout: float = 2.0) -> list[Any] | None:
    """Send a query and wait for its reply (other datagrams are skipped)."""
    from pythonosc.osc_message import OscMessage

    sock.sendto(build_message(address), target)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sock.settimeout(max(0.01, end - time.monotonic()))
        try:
            data, _ = sock.recvfrom(65536)
        except TimeoutError:
            return None
        try:
            msg = OscMessage(data)
        except Exception:
            continue
        if msg.address == "/" + address.rsplit("/", 1)[-1]:
            return list(msg.params)
    return None


# -- the run --------------------------------------------------------------------------------
def start_live(tmp: Path, files: dict[str, str], block: int) -> tuple[subprocess.Popen, tuple[str, int]]:
    cmd = [
        sys.executable,
        "-m",
        "audio.port.live",
        "live",
        "--no-audio",
        "--game",
        "skate",
        "--install",
        str(tmp / "install"),
        "--osc",
        "--osc-port",
        "0",
        "--allow",
        files["allowed"],
        "--capture",
        str(tmp / "run.jsonl"),
        "--record",
        str(tmp / "run.wav"),
        "--metrics-json",
        str(tmp / "metrics.json"),
        "--block",
        str(block),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # stderr to a file: a pipe nobody reads fills up and blocks the run's logging (and its threads)
    with (tmp / "live.stderr").open("w") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("OSC listening on "):
        proc.kill()
        raise RuntimeError(f"live did not start: {line}{(tmp / 'live.stderr').read_text()}")
    host, port = line.split()[-1].rsplit(":", 1)
    return proc, (host, int(port))


def flood(
    target: tuple[str, int],
    files: dict[str, str],
    seconds: float,
    rate: int,
    max_messages: int,
    seed: int,
    pid: int,
) -> dict[str, Any]:
    """Send the flood; every second ask ``/query/stats`` (a query stuck behind a full socket
    buffer may go unanswered: counted in ``stats_unanswered``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    f = Flood(files, seed)
    total, unanswered, t0 = 0, 0, time.monotonic()
    next_check = t0 + 1.0
    rss_peak = 0
    while time.monotonic() - t0 < seconds and total < max_messages:
        batch = max(1, rate // 100)
        for _ in range(min(batch, max_messages - total)):
            sock.sendto(f.next(), target)
            total += 1
        if time.monotonic() >= next_check:
            next_check += 1.0
            unanswered += ask(sock, target, "/query/stats", 1.0) is None
            rss_peak = max(rss_peak, rss_kib(pid))
        delay = t0 + total / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return {
        "sent": total,
        "sent_by_kind": f.sent,
        "seconds": time.monotonic() - t0,
        "stats_unanswered": unanswered,
        "rss_peak_kib": rss_peak,
        "socket": sock,
    }


def replay_matches(tmp: Path) -> tuple[bool, int, int]:
    """(identical, capture samples, record samples): the capture re-rendered vs the record."""
    import logging

    import soundfile as sf

    from audio.offline.render import render_replay

    logging.getLogger("barkbus").setLevel(logging.ERROR)  # the faults were counted by the live run
    res = render_replay(tmp / "run.jsonl")
    rec, _ = sf.read(tmp / "run.wav", dtype="float32", always_2d=True)
    same = res.audio.shape == rec.shape and np.array_equal(res.audio, rec)
    return bool(same), int(res.audio.shape[0]), int(rec.shape[0])


def soak(
    seconds: float, rate: int, max_messages: int, seed: int = 1, block: int = 256, keep: Path | None = None
) -> dict[str, Any]:
    """Run the whole soak; returns the report (see the module docstring)."""
    tmp = Path(tempfile.mkdtemp(prefix="barkbus-soak-"))
    try:
        broken = corrupt_install(tmp / "install")
        files = make_files(tmp)
        proc, target = start_live(tmp, files, block)
        time.sleep(1.0)
        rss_start = rss_kib(proc.pid)
        sent = flood(target, files, seconds, rate, max_messages, seed, proc.pid)
        sock = sent.pop("socket")
        stats = None
        for _ in range(10):  # the server may still be working through the socket's backlog
            stats = ask(sock, target, "/query/stats", 2.0)
            if stats is not None:
                break
        rss_end = rss_kib(proc.pid)
        alive = proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
        err = (tmp / "live.stderr").read_text(errors="replace")
        metrics = json.loads((tmp / "metrics.json").read_text())
        same, n_cap, n_rec = replay_matches(tmp)
        report = {
            **sent,
            "broken_takes": broken,
            "server": metrics.get("osc"),
            "last_stats_reply": stats,
            "faults_logged": metrics.get("faults"),
            "disabled_systems": metrics.get("disabled_systems"),
            "rss_start_mib": rss_start / 1024,
            "rss_end_mib": rss_end / 1024,
            "rss_peak_mib": sent["rss_peak_kib"] / 1024,
            "deadline_misses": metrics["deadline_misses"],
            "underruns": metrics["underruns"],
            "callbacks": metrics["callbacks"],
            "expected_callbacks": metrics["expected_callbacks"],
            "render_p99_us": metrics["render_p99_us"],
            "load_average": os.getloadavg(),
            "engine_alive": alive and stats is not None and abs(metrics["callback_ratio"] - 1.0) < 0.05,
            "exit_status": proc.returncode,
            "stopped_by_sigterm": "stopped by SIGTERM" in out,
            "replay_identical": same,
            "capture_samples": n_cap,
            "record_samples": n_rec,
            "stderr_tail": err.strip().splitlines()[-3:],
        }
        report.pop("rss_peak_kib")
        return report
    finally:
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(tmp, keep, symlinks=True)
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Soak `barkbus live --no-audio --osc` under a flood with faults.")
    p.add_argument("--seconds", type=float, default=20.0, help="flood duration (default 20 s)")
    p.add_argument("--rate", type=int, default=2000, help="messages per second (default 2000)")
    p.add_argument("--max-messages", type=int, default=5_000_000, help="stop after this many (default 5e6)")
    p.add_argument("--seed", type=int, default=1, help="flood seed (default 1)")
    p.add_argument("--json", type=Path, help="write the report here")
    p.add_argument("--keep", type=Path, help="copy the run's folder (capture, record, metrics) here")
    a = p.parse_args(argv)
    if not 0 < a.seconds <= 24 * 3600 or not 0 < a.rate <= 100_000:
        p.error("--seconds must be in (0, 86400] and --rate in (0, 100000]")
    report = soak(a.seconds, a.rate, a.max_messages, a.seed, keep=a.keep)
    text = json.dumps(report, indent=1, sort_keys=True)
    print(text)
    if a.json is not None:
        a.json.write_text(text, encoding="utf-8")
    ok = report["engine_alive"] and report["replay_identical"] and (report["server"] or {}).get("errors") == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
