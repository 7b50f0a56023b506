"""A live run's profiler page served by another process, fed by the render thread.

Why another process: the audio callback (PortAudio's thread calling into Python) and the render
thread both need the interpreter lock. A page server in the audio process (tornado's loop, the
page's voice rows, decision records, JSON, WebSocket frames) holds it in slices of up to the
switch interval many times a second, and the callback waits for it: measured through the JACK
dummy device at 64 voices with the page open, callback p99 and device underflows rose several
times (``tools/bench_live.py --compare``; numbers in the README).

So the audio process keeps only what must read the engine: the publisher's meters (every block)
and snapshot records (every 19 blocks, 10 Hz: numpy gathers, no Python per voice,
:mod:`.records`) on the render thread. The records go into a shared memory ring
(:mod:`.ring`: one array copy); ONE small pickled message per snapshot (its number, the bus
meters, the voices started since the last one with their fixed fields, decisions, ended voices'
ids and ends, panels) is sent without waiting on a Unix ``SOCK_SEQPACKET`` socket (a full socket
drops that message, counted; what it carried stays queued for the next one). Timing metrics go
once a second as the new callback and render durations. The server process (:mod:`.worker`, at
niceness :data:`PAGE_NICE`) does the rest: voice rows, the history, percentiles, JSON, HTTP and
WebSocket. Requests from the page (actions, listener moves) come back on the same socket as JSON
and are answered by a thread that sleeps in ``select``.

When the engine reports new underruns or deadline misses, snapshots slow down (half the rate per
step, down to a quarter) and come back to the full rate after two clean seconds.
"""

from __future__ import annotations

import errno
import itertools
import json
import logging
import os
import pickle
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from audio.core.bus import Decision, to_jsonable
from audio.live.profiler.ring import SnapshotRing
from audio.live.profiler.server import ProfilerError, bind_page, is_loopback, page_url
from audio.live.profiler.snapshot import Snapshot, SnapshotPublisher
from audio.live.profiler.sources import LiveSource

__all__ = ["MAX_MESSAGE", "PAGE_NICE", "ProfilerProcess"]

log = logging.getLogger("barkbus.profiler")
MAX_MESSAGE = 1 << 18
"""Largest message on the feed socket (bytes). The socket's buffer is sized for it: about a
second or two of snapshots may wait for a server process that is behind, then they drop."""
CHUNK = 256
"""Decisions (and bars) sent with one snapshot at most; the rest wait for the next."""
METRICS_EVERY_S = 1.0
"""Timing metrics period, seconds of engine time."""
READY_S = 30.0
"""How long the server process may take to start (s)."""
PAGE_NICE = 10
"""The server process' niceness: on a busy machine the audio process' threads go first."""
MAX_BACKOFF = 4
"""Slowest snapshot rate: the publisher's rate divided by this, while the engine underruns."""


def plain_decision(d: Decision) -> Decision:
    """``d`` with its outcome as a plain string and its detail as JSON-ready values (for a
    decision whose detail holds something pickle cannot carry)."""
    try:
        detail = json.loads(json.dumps(to_jsonable(d.detail), default=repr))
    except (TypeError, ValueError):
        detail = {"detail": repr(d.detail)[:1000]}
    return Decision(d.at, d.t, d.system, str(d.outcome), detail)  # type: ignore[arg-type]


class ProfilerProcess:
    """The profiler page of a running ``port``, served by a child process.

    The page's sockets are bound here (a busy port or a bad address fails before the run, as
    :class:`ProfilerError`); :meth:`start` starts the server process and hooks ``publisher``;
    :meth:`stop` ends both. ``url``, ``loopback`` and ``stats`` (updates the server process sent
    and skipped, clients, actions; ``fed`` and ``fed_dropped`` snapshots) as
    :class:`~audio.live.profiler.server.ProfilerServer` has them.

    Parameters
    ----------
    port:
        The :class:`~audio.port.api.VoicePort` (actions go to its inbox; its player's timings).
    publisher:
        The :class:`~audio.live.profiler.snapshot.SnapshotPublisher` fed by the render thread.
    host, number, token:
        Where the page is served (``number`` 0 = a free port) and its token.
    nice:
        The server process' niceness (default :data:`PAGE_NICE`: the audio goes first).
    """

    def __init__(
        self,
        port: Any,
        publisher: SnapshotPublisher,
        host: str = "127.0.0.1",
        number: int = 0,
        token: str | None = None,
        nice: int = PAGE_NICE,
    ) -> None:
        self.vport = port
        self.publisher = publisher
        self.host, self.token = host, token
        self.loopback = is_loopback(host)
        self._listen = bind_page(host, number, token)
        self.port = int(self._listen[0].getsockname()[1])
        self.stats: dict[str, int] = {
            "sent": 0,
            "skipped": 0,
            "clients": 0,
            "actions": 0,
            "rejected": 0,
            "fed": 0,
            "fed_dropped": 0,
        }
        self.requests = LiveSource(port, publisher)
        self._base_every = publisher.every
        self._cb_seen = 0
        self._render_seen = 0
        self._metrics_at = -1.0
        self._trouble = 0
        self._clean_since = 0.0
        self._sock: socket.socket | None = None
        self._ring: SnapshotRing | None = None
        self.nice = nice
        self.proc: subprocess.Popen[bytes] | None = None
        self._stop = threading.Event()
        self._bye = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address (with the token, when one is needed)."""
        return page_url(self.host, self.port, self.token)

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> ProfilerProcess:
        """Start the server process and feed it (the page is reachable once it has started)."""
        import audio

        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for s in (mine, theirs):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, MAX_MESSAGE)
        root = str(Path(str(audio.__file__)).resolve().parents[1])
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
        }
        ring = SnapshotRing(self.publisher.max_voices)
        fds = [theirs.fileno(), *(s.fileno() for s in self._listen), ring.fd]
        cmd = [
            sys.executable,
            "-m",
            "audio.live.profiler.worker",
            "--feed",
            str(fds[0]),
            "--listen",
            ",".join(str(f) for f in fds[1:-1]),
            "--ring",
            str(ring.fd),
            "--max-voices",
            str(ring.max_voices),
            "--nice",
            str(self.nice),
        ]
        self.proc = subprocess.Popen(cmd, pass_fds=fds, env=env, stdin=subprocess.DEVNULL)
        theirs.close()
        for s in self._listen:
            s.close()
        hello = {
            "host": self.host,
            "token": self.token,
            "game": self.vport.game,
            "games": sorted(self.requests.games),
            "actions": self.requests.actions,
            "rate_hz": round(self.publisher.sample_rate / self.publisher.block / self.publisher.every, 2),
        }
        mine.sendall(pickle.dumps(hello))
        if not self._wait_ready(mine):
            mine.close()
            self.proc.kill()
            status = self.proc.wait()
            self.proc = None
            ring.close()
            raise ProfilerError(f"the profiler's server process did not start (exit status {status})")
        mine.setblocking(False)
        self._sock = mine
        self._ring = ring
        self.publisher.on_snapshot = self._on_snapshot
        self._thread = threading.Thread(
            target=self._serve_requests, name="barkbus-profiler-requests", daemon=True
        )
        self._thread.start()
        return self

    def _wait_ready(self, sock: socket.socket) -> bool:
        """True once the server process says it serves the page (then the URL can be printed);
        False if it ends or says nothing for :data:`READY_S` seconds."""
        t_end = time.monotonic() + READY_S
        while (left := t_end - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                data = sock.recv(MAX_MESSAGE)
            except OSError:
                return False
            if not data:
                return False
            if json.loads(data).get("type") == "ready":
                return True
        return False

    def stop(self) -> None:
        """Stop feeding and end the server process (idempotent); its last counts land in
        :attr:`stats`."""
        self.publisher.on_snapshot = None
        self.publisher.records.detach()  # voice starts no longer recorded
        if self._sock is not None and self._thread is not None and self._thread.is_alive():
            try:
                self._sock.send(pickle.dumps(("bye",)))
                self._bye.wait(2.0)
            except OSError:
                pass
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        if self._sock is not None:
            self._sock.close()  # the server process sees the end of its feed and stops
            self._sock = None
        if self.proc is not None:
            try:
                self.proc.wait(10.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self._ring is not None:
            self._ring.close()
            self._ring = None

    # -- render thread --------------------------------------------------------------------
    def _on_snapshot(self, snap: Snapshot) -> None:
        sock, ring = self._sock, self._ring
        if sock is None or ring is None:
            return
        pub = self.publisher
        records = pub.records
        ring.write(snap.seq, snap.records)
        new = list(itertools.islice(records.new, CHUNK))
        decisions = list(itertools.islice(pub.decisions, CHUNK))
        ended = list(itertools.islice(pub.ended, CHUNK))
        ends = (
            (np.concatenate([e[0] for e in ended]), np.concatenate([e[1] for e in ended])) if ended else None
        )
        metrics = self._metrics(snap.t)
        head: tuple[Any, ...] = (snap.seq, snap.t, snap.sample_rate, snap.voices_total, snap.graphs)
        head += (snap.buses, snap.panels, snap.extra)
        try:
            data = pickle.dumps(("snap", head, new, decisions, ends, metrics), protocol=5)
        except Exception:  # a detail pickle cannot carry: send the decisions as plain values
            decisions = [plain_decision(d) for d in decisions]
            data = pickle.dumps(("snap", head, new, decisions, ends, metrics), protocol=5)
        try:
            sock.send(data)
        except (BlockingIOError, InterruptedError):  # the server process is behind: drop this one
            self.stats["fed_dropped"] += 1  # (the queues and the metrics' cursors stay for the next)
            return
        except OSError as exc:
            self.stats["fed_dropped"] += 1
            if exc.errno == errno.EMSGSIZE:
                log.warning("profiler snapshot of %d bytes too large for the feed: dropped", len(data))
            return
        self.stats["fed"] += 1
        for q, sent in ((records.new, new), (pub.decisions, decisions), (pub.ended, ended)):
            for _ in sent:
                q.popleft()
        if metrics is not None:
            self._cb_seen, self._render_seen = metrics["next"]

    def _metrics(self, t: float) -> dict[str, Any] | None:
        """Once a second: the callback and render durations since the last time, the counters;
        and the snapshot rate adapted to the engine's trouble."""
        player = self.vport.player
        if player is None or t - self._metrics_at < METRICS_EVERY_S:
            return None
        self._metrics_at = t
        cb = player.cb
        cb_ns, render_ns = player.timings_since(self._cb_seen, self._render_seen)
        trouble = cb.underruns + cb.misses
        pub = self.publisher
        if trouble > self._trouble:
            pub.every = min(self._base_every * MAX_BACKOFF, pub.every * 2)
            self._clean_since = t
        elif pub.every > self._base_every and t - self._clean_since >= 2.0:
            pub.every = max(self._base_every, pub.every // 2)
            self._clean_since = t
        self._trouble = trouble
        return {
            "callback_ns": cb_ns,
            "render_ns": render_ns,
            "next": (cb.count, player.blocks_rendered),
            "budget_us": player.budget_ns / 1e3,
            "deadline_misses": cb.misses,
            "underruns": cb.underruns,
            "underflows": cb.underflows,
            "events_dropped": player.inbox.dropped,
            "snapshot_hz": round(pub.sample_rate / pub.block / pub.every, 2),
            "fed_dropped": self.stats["fed_dropped"],
        }

    # -- requests from the page (own thread) ----------------------------------------------
    def _serve_requests(self) -> None:
        sock = self._sock
        assert sock is not None
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([sock], [], [], 0.25)
                if not ready:
                    continue
                data = sock.recv(MAX_MESSAGE)
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, ValueError):  # closed
                return
            if not data:  # the server process ended
                return
            try:
                msg = json.loads(data)
                if msg.get("type") in ("stats", "bye"):
                    self.stats.update({k: int(v) for k, v in msg["stats"].items() if k in self.stats})
                    if msg["type"] == "bye":
                        self._bye.set()
                        return
                    continue
                reply = self.requests.request(msg["req"], {})
                self._send_reply(sock, msg["rid"], reply)
            except Exception:  # the server process is ours, but a bad message costs only itself
                log.exception("profiler request failed")

    def _send_reply(self, sock: socket.socket, rid: int, reply: dict[str, Any]) -> None:
        data = pickle.dumps(("reply", rid, reply))
        for _ in range(50):  # the feed may be full for a moment: retry here, never on the render thread
            try:
                sock.send(data)
                return
            except (BlockingIOError, InterruptedError):
                time.sleep(0.01)
        log.warning("profiler reply to request %d dropped (the server process is not reading)", rid)
