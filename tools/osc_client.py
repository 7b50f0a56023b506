#!/usr/bin/env python3
"""Example OSC client for a live barkbus run (`barkbus live --osc`).

Sends a short script of messages (spawn a ped, fire speech values, move it, query
whether it speaks) or single messages, and prints the replies. Addresses are documented
in `audio/port/osc.py`.

Examples::

    python tools/osc_client.py demo --game skate          # spawn ped 1, values, moves, queries
    python tools/osc_client.py demo --game tone --seconds 5
    python tools/osc_client.py send /tone/on ann hello 440 0.5
    python tools/osc_client.py send /query/speaking ann --wait-reply
    python tools/osc_client.py send /event skate.value '{"ped": 1, "value": 14}'
"""

from __future__ import annotations

import argparse
import math
import socket
import sys
import time
from typing import Any

from pythonosc.osc_message import OscMessage
from pythonosc.osc_message_builder import OscMessageBuilder

from audio.port.adapters import parse_arg


def encode(address: str, *args: Any) -> bytes:
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
        c.send("/skate/spawn", 1, 0.0, 0.0, 6.0)
        c.send("/skate/speed", 2.0)
        fire = [("/skate/value", 1, v) for v in (6, 10, 14, 20, 23, 51)]
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
    s = sub.add_parser("send", help="send one message: ADDRESS [ARGS...] (numbers become int/float)")
    s.add_argument("address")
    s.add_argument("args", nargs="*")
    s.add_argument("--wait-reply", action="store_true", help="wait for and print one reply")
    a = p.parse_args(argv)
    c = Client(a.host, a.port, a.timeout)
    if a.cmd == "demo":
        return demo(c, a.game, a.seconds)
    args = [parse_arg(x) for x in a.args]
    if a.wait_reply:
        reply = c.ask(a.address, *args)
        print(reply if reply is not None else "no reply")
        return 0 if reply is not None else 1
    c.send(a.address, *args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
