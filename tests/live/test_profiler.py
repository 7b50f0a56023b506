"""The profiler's pieces without a browser: addresses, tokens, untrusted requests, the
render-thread publisher on a real engine, the history cursors and a decision log."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request

import numpy as np
import pytest
from fuzz_budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audio.core.bus import Decision
from audio.live.profiler.history import History
from audio.live.profiler.server import ProfilerError, ProfilerServer, is_loopback, parse_bind, static_dir
from audio.live.profiler.snapshot import SnapshotPublisher
from audio.live.profiler.sources import LiveSource, ReviewSource, coerce_values
from audio.port.adapters import ACTIONS, load_game_actions
from audio.port.api import open_system


def test_bind_addresses_default_to_loopback_and_a_free_port() -> None:
    assert parse_bind("") == ("127.0.0.1", 0)
    assert parse_bind(None) == ("127.0.0.1", 0)
    assert parse_bind("8080") == ("127.0.0.1", 8080)
    assert parse_bind("0.0.0.0:9") == ("0.0.0.0", 9)
    assert parse_bind("[::1]:7") == ("::1", 7)
    with pytest.raises(ProfilerError, match="PORT 0..65535"):
        parse_bind("host:http")
    assert is_loopback("localhost") and is_loopback("127.3.0.1") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")


def test_binding_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(ProfilerError, match="--profiler-token"):
        ProfilerServer(ReviewSource(History(), [], 0.0, "log"), "0.0.0.0", 0)


def _get(url: str, host: str | None = None) -> int:
    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_page_needs_the_token_and_a_loopback_host_name() -> None:
    src = ReviewSource(History(), [], 0.0, "log")
    server = ProfilerServer(src, "127.0.0.1", 0, token="s3cret").start()
    try:
        base = f"http://127.0.0.1:{server.port}/"
        assert _get(base) == 403
        assert _get(base + "?token=wrong") == 403
        assert _get(base + "?token=s3cret") == 200
        assert _get(base + "profiler.js?token=s3cret") == 200
        assert _get(base + "?token=s3cret", host=f"attacker.example:{server.port}") == 403
    finally:
        server.stop()


def test_page_assets_name_no_other_host() -> None:
    for f in static_dir().iterdir():
        text = f.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, f.name


def test_untrusted_values_are_typed_or_rejected_by_name() -> None:
    load_game_actions()
    listener = ACTIONS["listener"]
    assert coerce_values(listener, {"position": ["1", "2", "3.5"], "yaw_deg": "90"}) == {
        "position": [1.0, 2.0, 3.5],
        "yaw_deg": 90.0,
    }
    assert coerce_values(listener, {"position": "1 2 3", "yaw_deg": ""}) == {"position": [1.0, 2.0, 3.0]}
    with pytest.raises(ValueError, match="position"):
        coerce_values(listener, {"position": ["1", "2"]})
    with pytest.raises(ValueError, match="position"):
        coerce_values(listener, {"position": ["nan", "0", "0"]})
    with pytest.raises(ValueError, match="no parameter 'bogus'"):
        coerce_values(listener, {"bogus": 1})


def _port_with_publisher() -> tuple[object, SnapshotPublisher]:
    port = open_system("tone")
    pub = SnapshotPublisher(port.engine)
    port.block_hooks.append(pub.on_block)
    return port, pub


def test_publisher_meters_the_master_over_the_snapshot_interval() -> None:
    port, pub = _port_with_publisher()
    assert port.engine.mixer.meters  # the voice records' peaks read the voices' output rows
    port.emit("tone.on", speaker="ann", line="hello", seconds=1.0)
    n = pub.every * port.block
    audio = port.advance(3 * n / port.sample_rate)  # exactly three snapshot intervals
    snap = pub.latest
    assert snap is not None and snap.seq == 2 and snap.voices_total == 1
    assert snap.voices[0]["speaker"] == "ann"
    master = snap.buses[0]
    assert master["name"] == "master"
    tail = audio[-n:].astype(np.float64)  # independent: the last interval's samples, both channels
    assert master["peak_db"] == pytest.approx(20 * math.log10(np.abs(tail).max()), abs=0.01)
    assert master["rms_db"] == pytest.approx(10 * math.log10(np.mean(tail**2)), abs=0.01)


def test_a_finished_voice_becomes_a_bar_with_its_span() -> None:
    port, pub = _port_with_publisher()
    port.emit("tone.on", speaker="bob", line="x", seconds=0.2)
    port.advance(1.0)
    bars = pub.take_bars()
    assert len(bars) == 1 and bars[0].speaker == "bob"
    assert 0.2 <= bars[0].t1 - bars[0].t0 <= 0.35


def test_live_source_posts_a_form_action_and_rejects_an_unknown_one() -> None:
    port, pub = _port_with_publisher()
    src = LiveSource(port, pub)
    state: dict = {}
    hello = src.hello(state)
    assert "tone/on" in [a["name"] for a in hello["actions"]]
    ok = src.request({"type": "action", "name": "tone/on", "values": {"speaker": "cy", "line": "l1"}}, state)
    assert ok["ok"], ok
    bad = src.request({"type": "action", "name": "../etc", "values": {}}, state)
    assert not bad["ok"] and "no action" in bad["text"]
    port.advance(0.15)
    src.update()
    text = src.tick(state)
    assert text is not None
    msg = json.loads(text)
    assert any(d["speaker"] == "cy" for d in msg["decisions"])
    assert msg["snap"]["voices"][0]["speaker"] == "cy"


def test_history_cursors_survive_dropping_the_oldest() -> None:
    h = History(limit=3)
    for i in range(5):
        h.add_decision(Decision(i, i / 10, "s.x", "Started", {"speaker": "a"}))
    assert h.n_decisions == 5 and h.dropped == 2
    got, cur = h.decisions_from(0, 10)
    assert [d["i"] for d in got] == [2, 3, 4] and cur == 5
    assert h.decisions_from(cur, 10) == ([], 5)


def test_a_decision_log_gives_decisions_and_line_bars(tmp_path) -> None:
    from audio.live.profiler.review import review_source

    log = tmp_path / "run.jsonl"
    rows = [
        {
            "at": 0,
            "t": 0.0,
            "system": "sylpheed.chatter",
            "outcome": "Started",
            "speaker": "ann",
            "line": "a",
        },
        {"at": 4800, "t": 0.1, "system": "sylpheed.chatter", "outcome": "Duplicate", "speaker": "bob"},
        {
            "at": 48000,
            "t": 1.0,
            "system": "sylpheed.chatter",
            "outcome": "Finished",
            "speaker": "ann",
            "line": "a",
        },
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    src = review_source(log)
    assert [d["outcome"] for d in src.history.decisions] == ["Started", "Duplicate", "Finished"]
    assert src.history.decisions[1]["cls"] == "refused"
    assert [(b["speaker"], b["t0"], b["t1"]) for b in src.history.bars] == [("ann", 0.0, 1.0)]


def test_a_capture_replays_into_the_same_decisions_with_voices_and_snapshots(tmp_path) -> None:
    from audio.live.device import CaptureWriter
    from audio.live.profiler.review import review_source

    port = open_system("tone")
    path = tmp_path / "cap.jsonl"
    header = {"source": "live", "block": port.block, "start_sample": 0, **port.capture_header()}
    cap = CaptureWriter(path, header)
    port.bus.on_post(cap.record)
    seen: list[Decision] = []
    port.on_decision(seen.append)
    port.emit("tone.on", speaker="ann", line="a", seconds=0.3)
    port.advance(0.5)
    port.emit("tone.on", speaker="bob", line="b", seconds=0.2)
    port.advance(0.5)
    cap.close(port.now_samples)

    src = review_source(path)
    assert [(d["outcome"], d["speaker"]) for d in src.history.decisions] == [
        (d.outcome, str(d.detail.get("speaker", ""))) for d in seen
    ]
    assert src.duration == pytest.approx(1.0)
    assert sorted(b["speaker"] for b in src.history.bars) == ["ann", "bob"]
    assert 9 <= len(src.snapshots) <= 11  # 10 per second of run time
    state: dict = {}
    src.hello(state)
    src.request({"type": "seek", "t": 0.2}, state)
    msg = json.loads(src.tick(state) or "{}")
    assert [v["speaker"] for v in msg["snap"]["voices"]] == ["ann"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(["action", "listener", "seek", "bogus"]) | st.text(max_size=8),
    name=st.sampled_from(["tone/on", "listener", "emitter", "tone/stop"]) | st.text(max_size=12),
    values=_json,
    extra=st.dictionaries(st.sampled_from(["forward", "right", "turn"]), _json, max_size=3),
)
def test_any_request_from_the_page_is_answered_never_raised(kind, name, values, extra) -> None:
    port, pub = _SHARED
    src = LiveSource(port, pub)
    reply = src.request({"type": kind, "name": name, "values": values, **extra}, {})
    assert reply["type"] == "result" and isinstance(reply["ok"], bool) and reply["text"]


_SHARED = _port_with_publisher()


@settings(max_examples=examples(100))
@given(
    data=st.binary(max_size=300)
    | st.lists(_json, max_size=4).map(lambda xs: "\n".join(map(json.dumps, xs)).encode())
)
def test_a_bad_decision_log_is_one_format_error(data) -> None:
    import tempfile
    from pathlib import Path

    from audio.core.errors import FormatError
    from audio.live.profiler.review import from_log

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "log.jsonl"
        p.write_bytes(data)
        try:
            src = from_log(p)
        except FormatError:
            return
        except UnicodeDecodeError:
            pytest.fail("undecodable bytes must be a FormatError")
        assert src.duration >= 0


class _Client:
    def __init__(self, busy: bool) -> None:
        self.state: dict = {}
        self._busy = busy
        self.sent: list = []

    def busy(self) -> bool:
        return self._busy

    def send(self, msg) -> None:
        self.sent.append(msg)


def test_a_client_still_writing_misses_the_update_instead_of_queueing_it() -> None:
    port, pub = _port_with_publisher()
    src = LiveSource(port, pub)
    server = ProfilerServer(src, "127.0.0.1", 0)
    slow, quick = _Client(busy=True), _Client(busy=False)
    src.hello(slow.state)
    src.hello(quick.state)
    server.clients.update({slow, quick})
    port.emit("tone.on", speaker="dee", line="d")
    port.advance(0.2)
    server._tick()
    assert slow.sent == [] and server.stats["skipped"] == 1
    assert len(quick.sent) == 1 and "dee" in quick.sent[0]
    for s in server._sockets:
        s.close()
