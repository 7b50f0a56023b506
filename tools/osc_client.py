#!/usr/bin/env python3
"""Example OSC client for a live barkbus run (`barkbus live --osc`), and a test of the
documented address table.

``demo`` sends a short script of messages (spawn a ped, fire speech values, move it, query
whether it speaks) and prints the replies; ``send`` sends one message; ``table`` reads the
OSC address table of the README and checks every documented address against the running
server: a message with the documented arguments (required ones only, then all of them) is
accepted (or answered with the documented reply and argument types), and one with a
required argument missing is rejected. Exit status 0 when every check passes.

Examples::

    python tools/osc_client.py demo --game skate          # spawn ped 1 (voice busm1), values, moves
    python tools/osc_client.py demo --game tone --seconds 5
    python tools/osc_client.py table                      # check the README's table (exit 1 on a mismatch)
    python tools/osc_client.py send /tone/on ann hello 440 0.5
    python tools/osc_client.py send /query/speaking ann --wait-reply
    python tools/osc_client.py send /event skate.value '{"ped": 1, "value": 14}'
"""

from __future__ import annotations

import argparse
import math
import re
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pythonosc.osc_message import OscMessage
from pythonosc.osc_message_builder import OscMessageBuilder

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
sys.path.insert(0, str(ROOT))  # this tree's barkbus, wherever the client is started from

from audio.port.adapters import parse_arg


def encode(address: str, *args: Any) -> bytes:
    """One OSC message: ints as i, floats as f, strings as s."""
    b = OscMessageBuilder(address)
    for a in args:
        b.add_arg(a)
    return b.build().dgram


class Client:
    """A UDP socket that sends OSC messages and receives the replies on the same port."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.target = (host, port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1" if host in ("127.0.0.1", "localhost") else "0.0.0.0", 0))
        self.sock.settimeout(timeout)

    def send(self, address: str, *args: Any) -> None:
        self.sock.sendto(encode(address, *args), self.target)

    def ask(self, address: str, *args: Any) -> tuple[str, list[Any]] | None:
        """Send and wait for one reply: (address, args) or None on timeout."""
        self.send(address, *args)
        return self.reply()

    def reply(self) -> tuple[str, list[Any]] | None:
        try:
            data, _ = self.sock.recvfrom(65536)
        except TimeoutError:
            return None
        msg = OscMessage(data)
        return msg.address, list(msg.params)


def demo(c: Client, game: str, seconds: float) -> int:
    """Drive a run for ``seconds``: returns 0 if the speaker was heard speaking at least once."""
    if game == "skate":
        speaker = "1"
        c.send("/skate/spawn", 1, "busm1", 0.0, 0.0, 6.0)  # ped 1, voice busm1 (demo install), 6 m ahead
        c.send("/skate/speed", 2.0)
        fire = [("/skate/value", 1, v) for v in (6, 10, 14, 20, 23, 51, 53)]
        move = "/skate/move"
    else:
        speaker = "ann"
        fire = [("/tone/on", "ann", f"line{i}", 300.0 + 50 * i, 0.6, 0.4) for i in range(6)]
        move = None
    heard = 0
    t0 = time.monotonic()
    i = 0
    while time.monotonic() - t0 < seconds:
        addr, *args = fire[i % len(fire)]
        c.send(addr, *args)
        if move is not None:
            angle = i * 0.7
            c.send(move, 1, 6.0 * math.sin(angle), 0.0, 6.0 * math.cos(angle))  # around the listener
        time.sleep(0.25)
        reply = c.ask("/query/speaking", speaker)
        print(f"{time.monotonic() - t0:6.2f} s  {addr} {args}  -> {reply}")
        if reply is not None and reply[1][-1] == 1:
            heard += 1
        i += 1
        time.sleep(0.25)
    stats = c.ask("/query/stats")
    print(f"stats: {stats}; speaking replies: {heard}")
    return 0 if heard else 1


# -- the documented address table ---------------------------------------------------------
@dataclass(frozen=True)
class Arg:
    """One documented argument: ``name``, OSC type tag (i, f, s; ``i-or-s`` counts as i), optional."""

    name: str
    tag: str
    optional: bool


@dataclass(frozen=True)
class Row:
    """One row of the address table: address, arguments, and the reply (address, args) if any."""

    address: str
    args: tuple[Arg, ...]
    reply: tuple[str, tuple[Arg, ...]] | None


_ARG = re.compile(r"(\w+):([a-z\-]+)")
SAMPLES: dict[str, Any] = {
    "speaker": "ann",
    "line": "hello",
    "freq_hz": 440.0,
    "seconds": 0.3,
    "level": 0.3,
    "fade_ms": 5.0,
    "x": 1.0,
    "y": 0.0,
    "z": 4.0,
    "yaw_deg": 10.0,
    "id": "radio",
    "ped": 1,
    "voice": 41,
    "model": "regular",
    "value": 14,
    "speed": 2.0,
    "on": 1,
    "event": "LOCKON_1",
    "phase": 2,
    "kind": "tone.on",
    "json": '{"speaker": "ann", "seconds": 0.2}',
    "t": 0.0,
    "speech": "hello",
    "mode": "queued",
    "film_flags": 5,
    "expiry": -1,
    "remark": "",
    "condition": 1,
    "subject": 2,
    "component": 255,
    "gate": "generic",
    "disabled": 1,
    "restart": 0,
    "file": "talk.rmf",
    "packet": 0,
    "auto_advance": 0,
    "option": 0,
    "what": "missile",
    "ship": "Naginata",
    "other": "Bandit",
    "busy": 0,
}
"""A valid value for every argument name the table uses."""
OVERRIDES: dict[str, dict[str, Any]] = {
    "/radiata/talk": {"voice": 1},
    "/starlancer/happen": {"kind": "reliant", "value": 0},
    "/starlancer/say": {"speaker": "ship:Naginata"},
}
"""Per address, values for argument names that mean something else there (a voice on/off, a
Starlancer speaker)."""


def _args(spec: str) -> tuple[Arg, ...]:
    out = []
    optional = False
    for token in spec.split():
        if token.startswith("["):
            optional = True
        m = _ARG.search(token)
        if m:
            out.append(Arg(m.group(1), m.group(2), optional))
        if token.endswith("]"):
            optional = False
    return tuple(out)


def read_table(path: Path = README) -> list[Row]:
    """The OSC address table of ``path`` (markdown rows ``| `/address` | args | effect |``)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not re.fullmatch(r"`/[\w/]+`", cells[0]):
            continue
        reply = None
        m = re.search(r"reply `(/\w+)([^`]*)`", cells[2])
        if m:
            reply = (m.group(1), _args(m.group(2)))
        rows.append(Row(cells[0].strip("`"), _args(cells[1]), reply))
    return rows


def _value(a: Arg, address: str = "") -> Any:
    samples = {**SAMPLES, **OVERRIDES.get(address, {})}
    if a.name not in samples:
        raise KeyError(f"no sample value for argument {a.name!r}; add it to SAMPLES")
    v = samples[a.name]
    return float(v) if a.tag == "f" else v


_TYPES = {"i": int, "f": float, "s": str}


class TableCheck:
    """Checks a server against the table; ``results`` holds (ok, description) pairs."""

    def __init__(self, c: Client) -> None:
        self.c = c
        self.results: list[tuple[bool, str]] = []

    def check(self, ok: bool, what: str) -> None:
        self.results.append((ok, what))
        print(f"{'PASS' if ok else 'FAIL'}  {what}")

    def stats(self) -> list[Any]:
        r = self.c.ask("/query/stats")
        if r is None or r[0] != "/stats":
            raise RuntimeError(f"no /stats reply from {self.c.target} (is `barkbus live --osc` running?)")
        return r[1]

    def _sent(self, row: Row, args: list[Any], expect: str) -> None:
        before = self.stats()
        self.c.send(row.address, *args)
        time.sleep(0.02)
        after = self.stats()
        accepted, rejected = after[1] - before[1], after[2] - before[2]
        text = f"{row.address} {' '.join(map(repr, args))}".rstrip()
        if expect == "accepted":
            self.check(accepted == 1 and rejected == 0, f"{text} is accepted")
        else:
            self.check(rejected == 1 and accepted == 0, f"{text} is rejected")

    def _asked(self, row: Row, args: list[Any]) -> None:
        assert row.reply is not None
        r = self.c.ask(row.address, *args)
        address, want = row.reply
        text = f"{row.address} {' '.join(map(repr, args))}".rstrip()
        if r is None:
            self.check(False, f"{text} replies {address} (no reply)")
            return
        got_types = [type(v) for v in r[1]]
        if not want:  # documented without typed arguments (/actions: a list of addresses)
            ok = r[0] == address and all(t is str for t in got_types)
        else:
            need = [_TYPES.get(a.tag, object) for a in want]
            ok = r[0] == address and got_types == need
        self.check(ok, f"{text} replies {address} {' '.join(a.tag for a in want)} (got {r[0]} {r[1]})")

    def row(self, row: Row) -> None:
        required = [_value(a, row.address) for a in row.args if not a.optional]
        full = [_value(a, row.address) for a in row.args]
        if row.address == "/time":
            full = required  # `/time t` renders only with drive_clock: not for a live run
        for args in [required, full] if full != required else [required]:
            if row.reply is not None:
                self._asked(row, args)
            else:
                self._sent(row, args, "accepted")
        if required and row.reply is None:
            self._sent(row, required[:-1], "rejected")


def check_table(c: Client, path: Path = README) -> int:
    """Check every row of the table at ``path``; 0 if all pass."""
    rows = read_table(path)
    t = TableCheck(c)
    t.check(len(rows) >= 10, f"{path.name} documents {len(rows)} OSC addresses")
    usable = t.c.ask("/query/actions")
    listed = set(usable[1]) if usable else set()
    for row in rows:
        if not row.address.startswith(("/event", "/time", "/query/")):
            t.check(row.address in listed, f"{row.address} is listed by /query/actions")
        t.row(row)
    stats_row = next((r for r in rows if r.address == "/query/stats"), None)
    if stats_row is not None and stats_row.reply is not None:
        t.check(len(t.stats()) == len(stats_row.reply[1]), "/stats carries the documented counters")
    bad = [w for ok, w in t.results if not ok]
    print(f"{len(t.results) - len(bad)} of {len(t.results)} checks pass")
    return 0 if not bad else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Drive a live barkbus run over OSC (see audio/port/osc.py).")
    p.add_argument("--host", default="127.0.0.1", help="server address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9000, help="server UDP port (default 9000)")
    p.add_argument("--timeout", type=float, default=1.0, help="reply timeout, seconds (default 1.0)")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("demo", help="spawn a ped (or a tone speaker), fire values, move it, query speaking")
    d.add_argument(
        "--game", choices=("skate", "tone"), default="tone", help="which addresses to use (default tone)"
    )
    d.add_argument("--seconds", type=float, default=5.0, help="how long to drive the run (default 5 s)")
    t = sub.add_parser("table", help="check every address of the README's OSC table against the server")
    t.add_argument("--readme", type=Path, default=README, help="markdown file holding the table")
    s = sub.add_parser("send", help="send one message: ADDRESS [ARGS...] (numbers become int/float)")
    s.add_argument("address")
    s.add_argument("args", nargs="*")
    s.add_argument("--wait-reply", action="store_true", help="wait for and print one reply")
    a = p.parse_args(argv)
    c = Client(a.host, a.port, a.timeout)
    if a.cmd == "demo":
        return demo(c, a.game, a.seconds)
    if a.cmd == "table":
        return check_table(c, a.readme)
    args = [parse_arg(x) for x in a.args]
    if a.wait_reply:
        reply = c.ask(a.address, *args)
        print(reply if reply is not None else "no reply")
        return 0 if reply is not None else 1
    c.send(a.address, *args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
