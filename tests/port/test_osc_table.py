"""The documented OSC address table (README) holds: against the example client, and against
liblo's `oscsend` / `oscdump` (an OSC implementation nobody here wrote; Debian liblo-tools)."""

from __future__ import annotations

import importlib.util
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from named_stub import NamedStub

from audio.port import OscServer, open_system
from audio.port.osc import build_message

ROOT = Path(__file__).resolve().parents[2]


def _client_module():
    spec = importlib.util.spec_from_file_location("osc_client", ROOT / "tools" / "osc_client.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["osc_client"] = mod
    spec.loader.exec_module(mod)
    return mod


osc_client = _client_module()
needs_liblo = pytest.mark.skipif(
    shutil.which("oscsend") is None or shutil.which("oscdump") is None,
    reason="liblo-tools (oscsend, oscdump) not installed; tools/setup.sh installs it",
)


@pytest.fixture
def server():
    port = open_system(game="tone", seed=3)
    for name in ("skate.speech", "sylpheed.chatter", "starlancer", "radiata.talk"):
        port.engine.add_system(NamedStub(name))
    with OscServer(port, udp_port=0) as srv:
        yield srv


def _until_handled(server: OscServer, received: int) -> None:
    """Wait until ``received`` datagrams have arrived and each is counted as accepted, rejected,
    dropped or answered (arrival is counted first); 30 s only keeps a lost datagram from hanging."""
    s = server.stats
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if s.received >= received and s.accepted + s.rejected + s.dropped + s.queries >= s.received:
            return
        time.sleep(0.01)
    raise AssertionError(f"{received} datagrams not handled: {s}")


def test_the_readme_documents_every_address_the_server_offers():
    rows = {r.address for r in osc_client.read_table()}
    from audio.port.adapters import available_actions, load_game_actions

    load_game_actions()
    offered = {"/" + name for name in available_actions()}
    assert offered <= rows, f"undocumented addresses: {sorted(offered - rows)}"
    assert {"/event", "/time", "/query/speaking", "/query/line", "/query/actions", "/query/stats"} <= rows


def test_every_documented_address_is_accepted_or_answered_as_documented(server, capsys):
    c = osc_client.Client(*server.address, timeout=5.0)
    assert osc_client.check_table(c) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "FAIL" not in out and "/skate/value 1 14 is accepted" in out and "/query/stats" in out


def _dump(port: int, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        ["oscdump", "-L", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(0.3)  # let it bind
    return proc


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _parse_dump(text: str) -> list[tuple[str, str]]:
    """oscdump lines ``TIMETAG ADDRESS TYPES ARGS...`` -> [(address, types)]."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            out.append((parts[1], parts[2] if len(parts) > 2 else ""))
    return out


@needs_liblo
def test_liblo_oscsend_messages_with_the_documented_types_are_accepted(server):
    host, port = server.address
    sent = 0
    for row in osc_client.read_table():
        if row.reply is not None or row.address == "/event":
            continue
        args = [a for a in row.args if not a.optional]
        tags = "".join("i" if a.tag.startswith("i") else a.tag for a in args)
        values = [str(osc_client._value(a, row.address)) for a in args]
        r = subprocess.run(
            ["oscsend", host, str(port), row.address, tags, *values],
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert r.returncode == 0, r.stderr
        sent += 1
    r = subprocess.run(
        ["oscsend", host, str(port), "/event", "ss", "tone.on", '{"speaker": "liblo"}'],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert r.returncode == 0, r.stderr
    sent += 1
    _until_handled(server, sent)
    s = server.stats
    assert sent >= 11 and s.received == sent and s.accepted == sent and s.rejected == 0, s.last_reasons
    subprocess.run(["oscsend", host, str(port), "/skate/value", "ii", "1", "999"], check=True, timeout=10)
    subprocess.run(["oscsend", host, str(port), "/sylpheed/phase", "i", "99"], check=True, timeout=10)
    _until_handled(server, sent + 2)
    assert server.stats.rejected == 2 and server.stats.accepted == sent


@needs_liblo
def test_liblo_oscdump_reads_the_replies_and_the_clients_messages_with_the_documented_types(server):
    dport = _free_udp_port()
    dump = _dump(dport, 5)
    try:
        c = osc_client.Client(*server.address, timeout=5.0)
        fwd = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        expected = []
        for row in osc_client.read_table():
            args = [osc_client._value(a, row.address) for a in row.args if not a.optional]
            fwd.sendto(osc_client.encode(row.address, *args), ("127.0.0.1", dport))
            expected.append((row.address, "".join({int: "i", float: "f", str: "s"}[type(v)] for v in args)))
            if row.reply is not None and row.reply[1]:
                c.send(row.address, *args)
                data, _ = c.sock.recvfrom(65536)
                fwd.sendto(data, ("127.0.0.1", dport))  # the server's reply bytes, as liblo reads them
                expected.append((row.reply[0], "".join(a.tag for a in row.reply[1])))
        fwd.sendto(build_message("/skate/value", 1, 14), ("127.0.0.1", dport))
        expected.append(("/skate/value", "ii"))
        time.sleep(0.5)
    finally:
        dump.terminate()
        out, _ = dump.communicate(timeout=5)
    assert _parse_dump(out) == expected
    assert ("/stats", "iiiiii") in expected and ("/time", "fi") in expected
