"""Real-time playback of an engine through PortAudio (sounddevice), or a null output.

Threads
-------
render thread
    Drains the :class:`Inbox` (events from a controller, the TUI, OSC), posts them to
    ``engine.bus`` stamped with the start sample of the block about to be rendered (the
    block boundary), calls ``engine.render(block)`` and pushes the result into a
    :class:`~audio.core.ring.BlockRing` ``ahead`` blocks deep (default 2). Every posted event
    is recorded with the sample it took effect at, so the run can be replayed exactly.
audio callback
    Only copies one block out of the ring (or writes silence and counts an underrun),
    times itself with ``time.perf_counter_ns`` into preallocated arrays and counts
    PortAudio ``output_underflow`` flags. No locks, no I/O, no decoding.

A ``no_audio`` run replaces the device with a thread that calls the same callback once
per block period (5.33 ms at 48 kHz / 256 samples), so everything except the device
works on a machine without audio.

Metrics (:meth:`LivePlayer.metrics`, printed by :func:`format_metrics`): callback time
p50/p99/max (us) against the block budget (us), deadline misses (callbacks longer than
the budget), underruns (ring empty), underflows (PortAudio flags), callbacks against the
number the wall clock expects, render time per block p50/p99/max (us), events posted and
dropped.

Settings that are ours (not from any game): ``ahead`` blocks, the inbox bound, and the
interpreter thread switch interval used during a run (0.5 ms instead of Python's 5 ms,
which is about one block).

Outputs that survive a kill: :class:`CaptureWriter` appends every posted event to the capture
file as it happens and, at least every ``flush_s`` (0.25 s), flushes it and rewrites the
header's ``samples`` (the samples rendered when those events were written), so the file is a
complete capture of the run up to its last flush; :class:`RecordWriter` streams the rendered
blocks to a float32 WAV whose header it keeps up to date the same way. Both write on their own
thread (never in the audio callback); the render thread only appends to a queue.
"""

from __future__ import annotations

import abc
import collections
import gc
import json
import logging
import os
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from audio.core.bus import Event
from audio.core.capture import Capture, portable_header
from audio.core.clock import BLOCK, SAMPLE_RATE
from audio.core.errors import RunFailure
from audio.core.inbox import Inbox
from audio.core.ring import BlockRing

log = logging.getLogger("barkbus.live")

__all__ = [
    "CallbackMetrics",
    "CaptureWriter",
    "LivePlayer",
    "LiveSettings",
    "NoDeviceError",
    "RecordWriter",
    "audio_device_problem",
    "format_metrics",
    "list_devices",
    "metrics_json",
    "rescan_devices",
    "write_capture",
]


class NoDeviceError(RunFailure):
    """No usable audio output device (no PortAudio device, or opening it failed)."""


@dataclass
class LiveSettings:
    """Live playback settings.

    sample_rate (Hz), block (samples per callback), ahead (blocks rendered ahead, >= 1),
    device (sounddevice index or name; None = default output), no_audio (null output
    paced by the clock), inbox_size (events queued between blocks before dropping),
    switch_interval_s (``sys.setswitchinterval`` during the run, seconds),
    keep_blocks (keep a copy of every rendered block, for replay checks),
    freeze_gc (``gc.collect()`` then ``gc.freeze()`` at start, so the objects that exist
    before the run are never scanned again: shorter garbage-collection pauses in the
    render thread; undone at stop), keep_records (keep every posted event's capture record
    and (sample, received) pair in memory: ``records``, ``posted``; a long run streams its
    capture with :class:`CaptureWriter` instead), render_nice (the render thread's nice value
    on Linux, -10 by default so it is scheduled ahead of the process's other threads, as
    middleware raises its mixer thread; None leaves it; without the privilege it stays as it
    is, with one log line).
    """

    sample_rate: int = SAMPLE_RATE
    block: int = BLOCK
    ahead: int = 2
    device: int | str | None = None
    no_audio: bool = False
    inbox_size: int = 4096
    switch_interval_s: float = 0.0005
    keep_blocks: bool = False
    freeze_gc: bool = True
    keep_records: bool = True
    render_nice: int | None = -10


class CallbackMetrics:
    """Preallocated per-callback log (wraps after ``capacity`` callbacks)."""

    def __init__(self, capacity: int, budget_ns: int) -> None:
        self.capacity = capacity
        self.budget_ns = budget_ns
        self.durations_ns = np.zeros(capacity, dtype=np.int64)
        self.entry_ns = np.zeros(capacity, dtype=np.int64)
        self.block_start = np.full(capacity, -1, dtype=np.int64)
        self.count = 0
        self.first_ns = 0
        self.misses = 0
        self.underruns = 0
        self.underflows = 0

    def recent(self) -> slice:
        """Slice of the valid entries (all of them until the log wraps)."""
        return slice(0, min(self.count, self.capacity))

    def played_at(self) -> dict[int, int]:
        """Block start sample -> callback entry time (ns) for the logged callbacks."""
        s = self.recent()
        return {int(b): int(e) for b, e in zip(self.block_start[s], self.entry_ns[s]) if b >= 0}


class _NoStatus:
    output_underflow = False

    def __bool__(self) -> bool:
        return False


def rescan_devices() -> None:
    """Re-initialise PortAudio so devices that appeared after import (JACK) are listed."""
    import sounddevice as sd

    terminate = getattr(sd, "_terminate", None)
    initialize = getattr(sd, "_initialize", None)
    if terminate is not None and initialize is not None:
        terminate()
        initialize()


def list_devices() -> str:
    """The PortAudio device list as text ("" if there is none)."""
    import sounddevice as sd

    return str(sd.query_devices())


def audio_device_problem(
    device: int | str | None = None, sample_rate: int = SAMPLE_RATE, block: int = BLOCK
) -> str | None:
    """None if an output stream can be opened on ``device``, else the reason why not."""
    try:
        import sounddevice as sd
    except OSError as exc:  # libportaudio2 missing
        return f"PortAudio library not available: {exc}"
    try:
        rescan_devices()
        if len(sd.query_devices()) == 0:
            return "sounddevice.query_devices() lists no audio device"
        with sd.OutputStream(
            samplerate=sample_rate, blocksize=block, channels=2, dtype="float32", device=device
        ):
            pass
    except (sd.PortAudioError, ValueError) as exc:
        return f"cannot open an output stream: {exc}"
    return None


def _percentiles_us(values_ns: np.ndarray) -> tuple[float, float, float]:
    if values_ns.size == 0:
        return 0.0, 0.0, 0.0
    p50, p99 = np.percentile(values_ns, [50, 99])
    return float(p50) / 1e3, float(p99) / 1e3, float(values_ns.max()) / 1e3


class LivePlayer:
    """Plays ``engine`` in real time.

    Parameters
    ----------
    engine:
        Anything with ``render(n) -> (n, 2) float32``, ``bus`` (EventBus) and ``now``
        (samples).
    settings:
        :class:`LiveSettings`.
    inbox:
        Where controllers put events (a new bounded one if None).
    on_block:
        Optional ``callback(start_sample, block)`` run in the render thread after each
        render (benchmarks use it to find onsets); it must not keep ``block``.
    max_seconds:
        Length of the callback log to preallocate (longer runs wrap it), seconds.
    """

    def __init__(
        self,
        engine: Any,
        settings: LiveSettings | None = None,
        *,
        inbox: Inbox | None = None,
        on_block: Callable[[int, np.ndarray], None] | None = None,
        max_seconds: float = 900.0,
    ) -> None:
        self.engine = engine
        engine.load_wait = False  # the device's clock never waits for a file (audio.core.loader)
        self.s = settings or LiveSettings()
        if self.s.ahead < 1:
            raise ValueError(f"ahead must be >= 1 block, got {self.s.ahead}")
        self.inbox = inbox or Inbox(self.s.inbox_size)
        self.on_block = on_block
        self.ring = BlockRing(self.s.ahead, self.s.block, 2)
        self.budget_ns = self.s.block * 1_000_000_000 // self.s.sample_rate
        cap = max(1024, int(max_seconds * self.s.sample_rate / self.s.block) + 1)
        self.cb = CallbackMetrics(cap, self.budget_ns)
        self._render_ns = np.zeros(cap, dtype=np.int64)
        self.blocks_rendered = 0
        self.rendered: list[np.ndarray] = []
        self.records: list[dict[str, Any]] = []
        self.posted: list[tuple[int, int]] = []
        self.start_sample = int(engine.now)
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self.finished = threading.Event()
        self._threads: list[threading.Thread] = []
        self._stream: Any = None
        self._t_start = 0.0
        self._t_stop = 0.0
        self._old_switch = sys.getswitchinterval()
        self._running = False
        self.output_latency_s = 0.0
        self.events_posted = 0
        if self.s.keep_records:
            engine.bus.on_post(self.records.append)

    # -- controller side ---------------------------------------------------------------
    def post(self, event: Event, *, when: str = "now") -> bool:
        """Thread-safe: queue ``event`` for the next block (False if the inbox is full)."""
        return self.inbox.put(event, when=when)

    @property
    def samples_rendered(self) -> int:
        return self.blocks_rendered * self.s.block

    # -- render thread -----------------------------------------------------------------
    def _render_one(self) -> None:
        eng = self.engine
        posted = self.inbox.post_all(eng)
        if posted:
            self.events_posted += len(posted)
            if self.s.keep_records:
                self.posted.extend(posted)
        start = int(eng.now)
        t0 = time.perf_counter_ns()
        block = eng.render(self.s.block)
        self._render_ns[self.blocks_rendered % self._render_ns.size] = time.perf_counter_ns() - t0
        if self.s.keep_blocks:
            self.rendered.append(np.array(block, dtype=np.float32, copy=True))
        if self.on_block is not None:
            self.on_block(start, block)
        self.ring.push(block, start)
        self.blocks_rendered += 1

    def _render_loop(self) -> None:
        nap = self.s.block / self.s.sample_rate / 8
        if self.s.render_nice is not None and hasattr(os, "setpriority"):
            try:  # this thread only: Linux gives each thread its own nice value
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.s.render_nice)
            except OSError as exc:
                log.info(
                    "render thread priority left as it is (nice %d refused: %s)", self.s.render_nice, exc
                )
        try:
            while not self._stop.is_set():
                if self.ring.free() == 0:
                    time.sleep(nap)
                    continue
                self._render_one()
        except BaseException as exc:
            self.error = exc
            self._stop.set()
        finally:
            self.finished.set()

    # -- audio side --------------------------------------------------------------------
    def _callback(self, outdata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        # ``frames`` is sounddevice's name for the callback block's length in samples
        t0 = time.perf_counter_ns()
        m = self.cb
        i = m.count % m.capacity
        if i == 0 and m.count == 0:
            m.first_ns = t0
        if status and status.output_underflow:
            m.underflows += 1
        start = self.ring.pop_into(outdata) if frames == self.s.block else -1
        if start < 0:
            outdata.fill(0)
            m.underruns += 1
        m.block_start[i] = start
        m.entry_ns[i] = t0
        dt = time.perf_counter_ns() - t0
        m.durations_ns[i] = dt
        if dt > m.budget_ns:
            m.misses += 1
        m.count += 1

    def _null_output(self) -> None:
        out = np.zeros((self.s.block, 2), dtype=np.float32)
        period = self.s.block / self.s.sample_rate
        status = _NoStatus()
        nxt = time.perf_counter()
        while not self._stop.is_set():
            delay = nxt - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self._callback(out, self.s.block, None, status)
            nxt += period

    # -- run control -------------------------------------------------------------------
    def start(self) -> None:
        """Load the systems' graphs and kernels (:meth:`Engine.prepare`: no kernel loading on
        the render thread at a graph's first voice), prefill the ring, start the render thread
        and the output (device or null)."""
        if self._running:
            raise RuntimeError("this LivePlayer is already running")
        self.engine.prepare()
        self._running = True
        self._old_switch = sys.getswitchinterval()
        sys.setswitchinterval(self.s.switch_interval_s)
        if self.s.freeze_gc:
            gc.collect()
            gc.freeze()
        try:
            for _ in range(self.s.ahead):
                self._render_one()
        except BaseException:
            self._running = False
            self._restore()
            raise
        render = threading.Thread(target=self._render_loop, name="barkbus-render", daemon=True)
        self._threads = [render]
        render.start()
        self._t_start = time.perf_counter()
        if self.s.no_audio:
            null = threading.Thread(target=self._null_output, name="barkbus-null-output", daemon=True)
            self._threads.append(null)
            null.start()
            return
        import sounddevice as sd

        try:
            self._stream = sd.OutputStream(
                samplerate=self.s.sample_rate,
                blocksize=self.s.block,
                channels=2,
                dtype="float32",
                device=self.s.device,
                callback=self._callback,
                latency="low",
            )
            self._stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            self._running = False
            self._stop.set()
            render.join()
            self._restore()
            raise NoDeviceError(f"cannot open audio output {self.s.device!r}: {exc}") from exc
        self.output_latency_s = float(self._stream.latency)

    def _restore(self) -> None:
        sys.setswitchinterval(self._old_switch)
        if self.s.freeze_gc:
            gc.unfreeze()

    def stop(self) -> None:
        """Stop output and rendering (idempotent); re-raises a render-thread error."""
        if self._running:
            self._running = False
            self._stop.set()
            if self._stream is not None:
                self._stream.stop()
                self._stream.close()
                self._stream = None
            for th in self._threads:
                th.join()
            self._threads = []
            self._t_stop = time.perf_counter()
            self._restore()
        if self.error is not None:
            err, self.error = self.error, None
            raise RuntimeError(f"render thread failed: {err!r}") from err

    def wait(self, seconds: float | None = None, *, stop_when: Callable[[], bool] | None = None) -> None:
        """Block while running, for ``seconds`` of wall time (None: until Ctrl-C,
        ``stop_when()`` or a render error). Ctrl-C returns normally."""
        t_end = None if seconds is None else time.perf_counter() + seconds
        try:
            while not self._stop.is_set():
                if t_end is not None and time.perf_counter() >= t_end:
                    return
                if stop_when is not None and stop_when():
                    return
                time.sleep(0.01)
        except KeyboardInterrupt:
            return

    def run(self, seconds: float | None = None, *, stop_when: Callable[[], bool] | None = None) -> None:
        """:meth:`start`, :meth:`wait`, :meth:`stop`."""
        self.start()
        try:
            self.wait(seconds, stop_when=stop_when)
        finally:
            self.stop()

    # -- results -----------------------------------------------------------------------
    def metrics(self) -> dict[str, Any]:
        """Timing and event counters of the run so far (times in us, durations in s).

        ``expected_callbacks`` = the time from the first callback to the last, plus one
        period, divided by the block period.
        """
        m = self.cb
        s = m.recent()
        p50, p99, mx = _percentiles_us(m.durations_ns[s])
        nr = min(self.blocks_rendered, self._render_ns.size)
        r50, r99, rmx = _percentiles_us(self._render_ns[:nr])
        end = self._t_stop if self._t_stop else time.perf_counter()
        elapsed = max(0.0, end - self._t_start) if self._t_start else 0.0
        if m.count >= 2:
            last = int(m.entry_ns[(m.count - 1) % m.capacity])
            elapsed = (last - m.first_ns) / 1e9 + self.s.block / self.s.sample_rate
        expected = elapsed * self.s.sample_rate / self.s.block
        return {
            "elapsed_s": elapsed,
            "callbacks": m.count,
            "expected_callbacks": expected,
            "callback_ratio": (m.count / expected) if expected > 0 else 0.0,
            "budget_us": self.budget_ns / 1e3,
            "callback_p50_us": p50,
            "callback_p99_us": p99,
            "callback_max_us": mx,
            "deadline_misses": m.misses,
            "underruns": m.underruns,
            "underflows": m.underflows,
            "blocks_rendered": self.blocks_rendered,
            "samples_rendered": self.samples_rendered,
            "render_p50_us": r50,
            "render_p99_us": r99,
            "render_max_us": rmx,
            "events_posted": self.events_posted,
            "events_dropped": self.inbox.dropped,
            "output_latency_s": self.output_latency_s,
        }

    def timings_since(self, callbacks: int, blocks: int) -> tuple[np.ndarray, np.ndarray]:
        """Durations (ns) of the callbacks from number ``callbacks`` on and of the renders from
        block ``blocks`` on, so far (the newest the logs still hold): copies, any thread."""
        m = self.cb
        n, nb = m.count, self.blocks_rendered
        cbs = np.arange(max(callbacks, n - m.capacity + 1, 0), n) % m.capacity
        rs = np.arange(max(blocks, nb - self._render_ns.size + 1, 0), nb) % self._render_ns.size
        return m.durations_ns[cbs], self._render_ns[rs]

    def capture_header(self, **extra: Any) -> dict[str, Any]:
        """Header for :func:`write_capture`: sample rate, block, first sample and samples rendered."""
        return {
            "source": "live",
            "sample_rate": self.s.sample_rate,
            "block": self.s.block,
            "start_sample": self.start_sample,
            "samples": self.samples_rendered,
            **extra,
        }


def write_capture(path: str | Path, header: dict[str, Any], records: list[dict[str, Any]]) -> Path:
    """Write a capture (JSON lines, :class:`audio.core.capture.Capture`) of ``records``."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as fh:
        cap = Capture(fh, portable_header(header, path))
        for rec in records:
            cap.record(rec)
        cap.close()
    return path


class _Streamer(abc.ABC):
    """A writer thread that calls ``_flush`` every ``flush_s`` seconds and once more at close."""

    def __init__(self, name: str, flush_s: float) -> None:
        if not 0 < flush_s <= 1.0:
            raise ValueError(f"flush_s must be in (0, 1] s, got {flush_s}")
        self.flush_s = flush_s
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.flush_s):
            self._safe_flush()

    def _safe_flush(self) -> None:
        try:
            with self._lock:
                self._flush()
        except Exception as exc:
            if self.error is None:
                self.error = exc

    @abc.abstractmethod
    def _flush(self) -> None:
        """Write what has arrived since the last flush (under the lock)."""

    def _finish(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._safe_flush()


class CaptureWriter(_Streamer):
    """Streams a capture to ``path``: the header at once, then every posted event as it comes.

    Attach it with ``bus.on_post(writer.record)`` (the render thread only appends to a queue).
    ``samples()`` tells how many samples have been rendered; every ``flush_s`` seconds the
    queued events are written, the file is flushed, and the header's ``samples`` (a
    space-padded number, still valid JSON) is rewritten to the count read before those events
    were taken, so every event that can affect those samples is in the file.
    """

    _WIDTH = 20

    def __init__(
        self,
        path: str | Path,
        header: dict[str, Any],
        samples: Callable[[], int] = lambda: 0,
        flush_s: float = 0.25,
    ) -> None:
        super().__init__("barkbus-capture", flush_s)
        self.path = Path(path)
        self.samples = samples
        self.written = 0
        self._q: collections.deque[dict[str, Any]] = collections.deque()
        head = {k: v for k, v in portable_header(header, self.path).items() if k != "samples"}
        line = json.dumps({"capture": "barkbus", "version": 1, **head})[:-1] + ', "samples": '
        self._fh = self.path.open("wb")
        self._at = len(line.encode("utf-8"))
        self._fh.write(line.encode("utf-8") + b"0".ljust(self._WIDTH) + b"}\n")
        self._fh.flush()
        self._thread.start()

    def record(self, rec: dict[str, Any]) -> None:
        """Queue one capture record (``bus.on_post`` callback; any thread)."""
        self._q.append(rec)

    def _flush(self, samples: int | None = None) -> None:
        n = int(self.samples()) if samples is None else samples
        lines = []
        while self._q:
            lines.append(json.dumps(self._q.popleft(), separators=(",", ":")))
        if lines:
            self._fh.write(("\n".join(lines) + "\n").encode("utf-8"))
            self.written += len(lines)
        self._fh.flush()
        self._fh.seek(self._at)
        self._fh.write(str(n).encode().ljust(self._WIDTH))
        self._fh.seek(0, os.SEEK_END)
        self._fh.flush()

    def close(self, samples: int) -> Path:
        """Write what is queued, set ``samples`` to the final count, and close the file."""
        self._finish()
        with self._lock:
            self._flush(samples)
            os.fsync(self._fh.fileno())
            self._fh.close()
        if self.error is not None:
            raise OSError(f"capture {self.path}: {self.error}") from self.error
        return self.path


class RecordWriter(_Streamer):
    """Streams rendered blocks to a float32 WAV at ``path`` (``push`` from the render thread).

    Every ``flush_s`` seconds the queued blocks are appended and the RIFF, ``fact`` and
    ``data`` sizes are rewritten, so the file on disk is always a valid WAV of what was
    written. Stops recording (and says so in ``full``) before the 4 GiB RIFF limit.
    """

    _HEADER = 58  # RIFF(12) + fmt (8 + 18) + fact (8 + 4) + data header (8)

    def __init__(self, path: str | Path, sample_rate: int, channels: int = 2, flush_s: float = 0.25) -> None:
        super().__init__("barkbus-record", flush_s)
        self.path = Path(path)
        self.sample_rate, self.channels = int(sample_rate), int(channels)
        self.samples = 0
        """Samples (per channel) written so far."""
        self.full = False
        self._q: collections.deque[np.ndarray] = collections.deque()
        self._fh = self.path.open("wb")
        self._fh.write(self._header(0))
        self._fh.flush()
        self._thread.start()

    def _header(self, samples: int) -> bytes:
        ch, sample_rate = self.channels, self.sample_rate
        data = samples * ch * 4
        fmt = struct.pack("<HHIIHHH", 3, ch, sample_rate, sample_rate * ch * 4, ch * 4, 32, 0)
        return (
            b"RIFF"
            + struct.pack("<I", self._HEADER - 8 + data)
            + b"WAVE"
            + b"fmt "
            + struct.pack("<I", 18)
            + fmt
            + b"fact"
            + struct.pack("<II", 4, samples)
            + b"data"
            + struct.pack("<I", data)
        )

    def push(self, start: int, block: np.ndarray) -> None:
        """Queue a copy of ``block`` ((samples, channels) float32); ``on_block`` callback shape."""
        self._q.append(np.array(block, dtype="<f4", copy=True))

    def _flush(self) -> None:
        limit = (2**32 - 1 - self._HEADER) // (self.channels * 4)
        while self._q:
            blk = self._q.popleft()
            if self.samples + blk.shape[0] > limit:
                self.full = True
                self._q.clear()
                break
            self._fh.write(blk.tobytes())
            self.samples += blk.shape[0]
        self._fh.flush()
        self._fh.seek(0)
        self._fh.write(self._header(self.samples))
        self._fh.seek(0, os.SEEK_END)
        self._fh.flush()

    def close(self) -> Path:
        """Write what is queued, finish the header and close the file."""
        self._finish()
        with self._lock:
            os.fsync(self._fh.fileno())
            self._fh.close()
        if self.error is not None:
            raise OSError(f"record {self.path}: {self.error}") from self.error
        return self.path


def format_metrics(m: dict[str, Any]) -> str:
    """Human-readable summary of :meth:`LivePlayer.metrics`."""
    return "\n".join(
        [
            (
                f"callbacks {m['callbacks']} / expected {m['expected_callbacks']:.1f} from the clock "
                f"({100 * m['callback_ratio']:.1f}%) over {m['elapsed_s']:.2f} s"
            ),
            (
                f"callback time p50 {m['callback_p50_us']:.1f} us, p99 {m['callback_p99_us']:.1f} us, "
                f"max {m['callback_max_us']:.1f} us (budget {m['budget_us']:.0f} us)"
            ),
            (
                f"render time per block p50 {m['render_p50_us']:.0f} us, p99 {m['render_p99_us']:.0f} us, "
                f"max {m['render_max_us']:.0f} us"
            ),
            f"deadline misses {m['deadline_misses']}, underruns {m['underruns']}, "
            f"underflows {m['underflows']}",
            f"events posted {m['events_posted']}, dropped {m['events_dropped']}",
        ]
    )


def metrics_json(m: dict[str, Any]) -> str:
    """Metrics as one JSON line."""
    return json.dumps(m, sort_keys=True)
