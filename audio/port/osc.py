"""OSC over UDP: drive a :class:`~audio.port.api.VoicePort` from another process.

The server binds 127.0.0.1 (port 9000 by default) and turns each message into a bus event
through the action registry (:mod:`audio.port.adapters`). Every address may also be
written with a ``/barkbus`` prefix (``/barkbus/skate/value`` = ``/skate/value``).
Bundles are accepted; their time tags are ignored (events take effect at the next block
boundary). Replies go to the sender's address and port.

Address space
-------------
| address | arguments | effect / reply |
|---|---|---|
| `/event` | kind:s json:s | any registered event kind (`audio.core.bus.event_kinds()`) from a JSON object |
| `/tone/on` | speaker:s [line:s freq_hz:f seconds:f level:f fade_ms:f] | test-tone line (event `tone.on`) |
| `/tone/stop` | speaker:s | stop the speaker's tone line (`tone.stop`) |
| `/listener` | x:f y:f z:f [yaw_deg:f] | move the listener (`world.listener`, metres, degrees) |
| `/emitter` | id:s x:f y:f z:f | place an emitter (`world.emitter`) |
| `/time` | [t:f] | reply `/time now_s:f now_samples:i`; with `t` and `drive_clock`, render to `t` s first |
| `/query/speaking` | speaker:s | reply `/speaking speaker:s active:i` (0/1) |
| `/query/line` | line:s | reply `/line line:s active:i` (0/1) |
| `/query/actions` | | reply `/actions` with the usable addresses |
| `/query/stats` | | reply `/stats received:i accepted:i rejected:i dropped:i errors:i faults:i` |

Each registered game adds its own addresses (``/NAME/...``, from its ``actions.py``; the
README lists them all and ``/query/actions`` replies with the usable ones).

Robustness: an undecodable datagram, a bundle nested more than :data:`MAX_BUNDLE_DEPTH`
deep or holding more than :data:`MAX_BUNDLE_ELEMENTS` elements, an unknown address, a wrong
argument count or type, a non-finite number or one outside the event class's field ranges
(``/skate/value 1 999``, ``/sylpheed/phase 99``), a file outside the port's allowed roots
(``stats.refused``, also a ``refused`` fault) is rejected with a reason (``stats.rejected``,
``stats.last_reasons``, logged at WARNING for the first 20 and then every 1000th) and never
reaches the engine. Any other exception while handling a datagram is a bug: it is caught,
counted (``stats.errors``, in ``/query/stats``) and logged with its traceback, and receiving
goes on. Events wait in the port's bounded inbox; in a flood the excess is dropped and
counted (``stats.dropped``), the kernel's socket buffer bounds the rest.
"""

from __future__ import annotations

import collections
import json
import logging
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Self

from pythonosc.osc_message_builder import OscMessageBuilder
from pythonosc.osc_packet import OscPacket, ParseError

from audio.core.errors import BarkbusError
from audio.core.paths import PathRefused
from audio.port.adapters import ACTIONS, load_game_actions
from audio.port.api import VoicePort
from audio.port.events import PortError, make_event

__all__ = [
    "DEFAULT_PORT",
    "MAX_BUNDLE_DEPTH",
    "MAX_BUNDLE_ELEMENTS",
    "OscServer",
    "OscStats",
    "build_message",
    "check_bundle",
]

DEFAULT_PORT = 9000
_PREFIX = "/barkbus"
_MAX_DATAGRAM = 65_536
_JSON_MAX = 4096
_MAX_STEP_S = 60.0
MAX_BUNDLE_DEPTH = 8
"""Deepest bundle nesting accepted (a bundle directly in the datagram is depth 1)."""
MAX_BUNDLE_ELEMENTS = 1024
"""Most messages and bundles in one datagram."""
_BUNDLE = b"#bundle\x00"
log = logging.getLogger("barkbus.osc")


@dataclass
class OscStats:
    """Counters of an :class:`OscServer` and its last rejection reasons.

    Every decoded message ends as exactly one of: accepted (an event queued), dropped
    (inbox full), rejected (with a reason), or a query (answered to the sender).
    """

    received: int = 0
    """Datagrams."""
    undecodable: int = 0
    """Datagrams rejected whole (not OSC, a bad bundle); counted in ``rejected`` too."""
    messages: int = 0
    """Messages decoded from the datagrams; each is accepted, dropped, rejected, a query or an
    error."""
    accepted: int = 0
    rejected: int = 0
    dropped: int = 0
    queries: int = 0
    replies: int = 0
    errors: int = 0
    refused: int = 0
    last_reasons: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=16))


def check_bundle(data: bytes) -> None:
    """Walk a datagram's bundle structure without recursion; PortError if it nests deeper than
    :data:`MAX_BUNDLE_DEPTH`, holds more than :data:`MAX_BUNDLE_ELEMENTS` elements or has an
    element size that does not fit (a plain message passes).

    Parameters
    ----------
    data:
        One UDP datagram (untrusted).
    """
    if not data.startswith(_BUNDLE):
        return
    stack = [(0, len(data), 1)]
    count = 0
    while stack:
        start, end, depth = stack.pop()
        if depth > MAX_BUNDLE_DEPTH:
            raise PortError(f"OSC bundle nested deeper than {MAX_BUNDLE_DEPTH}")
        pos = start + 16
        if pos > end:
            raise PortError("OSC bundle shorter than its 16-byte header")
        while pos < end:
            if pos + 4 > end:
                raise PortError(f"OSC bundle element size cut at byte {pos}")
            size = int.from_bytes(data[pos : pos + 4], "big", signed=True)
            pos += 4
            if size <= 0 or size % 4 or pos + size > end:
                raise PortError(f"OSC bundle element at byte {pos - 4} has a bad size {size}")
            count += 1
            if count > MAX_BUNDLE_ELEMENTS:
                raise PortError(f"OSC bundle holds more than {MAX_BUNDLE_ELEMENTS} elements")
            if data.startswith(_BUNDLE, pos):
                stack.append((pos, pos + size, depth + 1))
            pos += size


def build_message(address: str, *args: Any) -> bytes:
    """Encode one OSC message (ints as i, floats as f, str as s, bool as T/F).

    Parameters
    ----------
    address:
        OSC address pattern (``/tone/on``).
    args:
        Arguments: int, float, str or bool.
    """
    b = OscMessageBuilder(address)
    for a in args:
        b.add_arg(a)
    return b.build().dgram


class OscServer:
    """UDP OSC server in a daemon thread, posting to ``port``.

    Parameters
    ----------
    port:
        The :class:`VoicePort` to drive.
    host, udp_port:
        Bind address (default 127.0.0.1, :data:`DEFAULT_PORT`; 0 picks a free port).
    drive_clock:
        Let ``/time t`` advance a pulled port (no audio device); refused otherwise.
    """

    def __init__(
        self,
        port: VoicePort,
        host: str = "127.0.0.1",
        udp_port: int = DEFAULT_PORT,
        *,
        drive_clock: bool = False,
    ) -> None:
        self.port = port
        self.drive_clock = drive_clock
        self.stats = OscStats()
        load_game_actions()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.bind((host, udp_port))
        self._sock.settimeout(0.05)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        """The bound (host, port)."""
        return self._sock.getsockname()

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._serve, name="barkbus-osc", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._sock.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- receive loop ------------------------------------------------------------------
    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, sender = self._sock.recvfrom(_MAX_DATAGRAM)
            except (TimeoutError, BlockingIOError, InterruptedError):
                continue
            except OSError:
                if self._stop.is_set():
                    return
                self._error("receiving", None)
                self._stop.wait(0.01)
                continue
            self.handle_datagram(data, sender)

    def handle_datagram(self, data: bytes, sender: tuple[str, int] | None = None) -> None:
        """Decode and apply one datagram (message or bundle); never raises.

        Parameters
        ----------
        data:
            One UDP datagram (untrusted).
        sender:
            ``(host, port)`` it came from, for replies and logs.
        """
        self.stats.received += 1
        try:
            self._handle(data, sender)
        except Exception as exc:
            self._error(f"datagram of {len(data)} bytes", exc)

    def _handle(self, data: bytes, sender: tuple[str, int] | None) -> None:
        try:
            check_bundle(data)
            messages = [m.message for m in OscPacket(data).messages]
        except PortError as exc:
            self.stats.undecodable += 1
            self._reject(str(exc))
            return
        except (ParseError, ValueError, IndexError, TypeError, OverflowError, RecursionError) as exc:
            self.stats.undecodable += 1
            self._reject(f"undecodable OSC datagram ({len(data)} bytes): {exc}")
            return
        self.stats.messages += len(messages)
        for msg in messages:
            try:
                self._apply(msg.address, list(msg.params), sender)
            except PathRefused as exc:  # the port reported it as a fault (and logged it) once
                self.stats.refused += 1
                self._reject(str(exc), log_it=False)
            except BarkbusError as exc:
                self._reject(str(exc))
            except (ValueError, TypeError, OverflowError, RecursionError) as exc:
                self._reject(f"{msg.address}: {exc}")
            except Exception as exc:
                self._error(f"message {str(msg.address)[:80]!r}", exc)

    def _error(self, what: str, exc: BaseException | None) -> None:
        self.stats.errors += 1
        n = self.stats.errors
        if n <= 5 or n % 1000 == 0:
            log.error("OSC handler error %d while handling %s (server goes on)", n, what, exc_info=exc)

    def _reject(self, reason: str, log_it: bool = True) -> None:
        self.stats.rejected += 1
        self.stats.last_reasons.append(reason)
        n = self.stats.rejected
        if log_it and (n <= 20 or n % 1000 == 0):
            log.warning("OSC message rejected (%d so far): %s", n, reason)

    def _reply(self, sender: tuple[str, int] | None, address: str, *args: Any) -> None:
        self.stats.queries += 1
        if sender is None:
            return
        try:
            self._sock.sendto(build_message(address, *args), sender)
            self.stats.replies += 1
        except OSError as exc:
            self._reject(f"cannot reply to {sender}: {exc}")

    def _post(self, ev: Any) -> None:
        if self.port.post(ev, when="now"):
            self.stats.accepted += 1
        else:
            self.stats.dropped += 1

    def _apply(self, address: str, args: list[Any], sender: tuple[str, int] | None) -> None:
        if address.startswith(_PREFIX + "/"):
            address = address[len(_PREFIX) :]
        if address == "/event":
            if len(args) != 2 or not all(isinstance(a, str) for a in args):
                raise PortError("/event: expected kind:s json:s")
            if len(args[1]) > _JSON_MAX:
                raise PortError(f"/event: JSON longer than {_JSON_MAX} characters")
            try:
                fields = json.loads(args[1])
            except (json.JSONDecodeError, RecursionError) as exc:
                raise PortError(f"/event {args[0]}: bad JSON: {exc}") from None
            if not isinstance(fields, dict):
                raise PortError(f"/event {args[0]}: JSON must be an object of fields")
            fields.pop("t", None)
            self._post(make_event(args[0], **{str(k): v for k, v in fields.items()}))
        elif address == "/time":
            self._time(args, sender)
        elif address == "/query/speaking":
            if len(args) != 1:
                raise PortError("/query/speaking: expected speaker")
            self._reply(sender, "/speaking", str(args[0]), int(self.port.is_speaking(args[0])))
        elif address == "/query/line":
            if len(args) != 1:
                raise PortError("/query/line: expected line")
            self._reply(sender, "/line", str(args[0]), int(self.port.line_active(args[0])))
        elif address == "/query/actions":
            usable = sorted(
                "/" + n
                for n, a in ACTIONS.items()
                if a.unavailable() is None and self.port.accepts(a.kind) is None
            )
            self._reply(sender, "/actions", *usable)
        elif address == "/query/stats":
            s = self.stats
            self._reply(
                sender,
                "/stats",
                s.received,
                s.accepted,
                s.rejected,
                s.dropped,
                s.errors,
                self.port.engine.faults.count,
            )
        else:
            action = ACTIONS.get(address.lstrip("/"))
            if action is None:
                raise PortError(f"unknown OSC address {address!r}")
            self._post(action.build(args))

    def _time(self, args: list[Any], sender: tuple[str, int] | None) -> None:
        if args:
            t = args[0]
            if len(args) != 1 or isinstance(t, bool) or not isinstance(t, (int, float)) or not (0 <= t < 1e7):
                raise PortError("/time: expected one time in seconds, 0 <= t < 1e7")
            if not self.drive_clock or self.port.player is not None:
                raise PortError("/time t: the clock is driven by the audio device or the host, not OSC")
            if t - self.port.now > _MAX_STEP_S:
                raise PortError(
                    f"/time: at most {_MAX_STEP_S:g} s ahead per message (now {self.port.now:.3f} s)"
                )
            self.port.advance_to(float(t))
        self._reply(sender, "/time", float(self.port.now), int(self.port.now_samples))
