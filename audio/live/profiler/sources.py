"""What the page server shows: a running port (:class:`LiveSource`) or a finished run
(:class:`ReviewSource`). Both speak the same messages, so the page is the same.

Messages to the page (JSON): ``hello`` (mode, game, the run's actions, duration of a finished
run), ``tick`` (the newest snapshot, the decisions and voice bars since the client's cursors,
the game panels when they changed, the timing metrics once a second), ``result`` (the answer to
a request). Requests from the page: ``action`` (an action name and its parameter values,
exactly the action table OSC and the TUI use), ``listener`` (move forward/right in metres, turn
in degrees), ``seek`` (a finished run: show the state at ``t`` seconds).

Everything from the page is untrusted: unknown actions, wrong types and files outside the
allowed folders are one rejected request each.
"""

from __future__ import annotations

import bisect
import json
import math
import time
from typing import Any

from audio.core.plugin import VEC3, Action, parse_arg
from audio.live.profiler.history import History
from audio.live.profiler.snapshot import Snapshot

__all__ = ["LiveSource", "ReviewSource", "action_specs", "coerce_values"]

CHUNK = 2000
"""Decisions (and bars) sent per tick to a client catching up."""


def _type_name(t: Any) -> str:
    return t if isinstance(t, str) else getattr(t, "__name__", str(t))


def action_specs(actions: dict[str, Action], games: set[str]) -> list[dict[str, Any]]:
    """The usable ``actions`` of ``games`` (and the generic ones), as the page's form needs them."""
    out = []
    for name, a in sorted(actions.items()):
        if a.unavailable() is not None:
            continue
        if "/" in name and name.split("/")[0] not in games:
            continue
        params = [
            {
                "name": p.name,
                "type": _type_name(p.type),
                "required": p.required,
                "default": None if p.required else p.default,
            }
            for p in a.params
        ]
        out.append({"name": name, "help": a.help, "usage": a.usage(), "params": params})
    return out


def coerce_values(action: Any, values: Any) -> dict[str, Any]:
    """The page's parameter values (strings or numbers) typed as ``action`` declares them;
    empty optional ones are left out. ValueError with the parameter's name if one is bad."""
    if not isinstance(values, dict):
        raise ValueError("values must be an object of parameter -> value")
    out: dict[str, Any] = {}
    known = {p.name: p for p in action.params}
    for name, raw in values.items():
        p = known.get(name)
        if p is None:
            raise ValueError(f"/{action.name} has no parameter {name!r} (has {', '.join(known) or 'none'})")
        if raw is None or raw == "" or raw == []:
            if p.required:
                raise ValueError(f"/{action.name}: {name} is required")
            continue
        try:
            if p.type == VEC3:
                xs = raw if isinstance(raw, list) else str(raw).replace(",", " ").split()
                if len(xs) != 3:
                    raise ValueError("three numbers")
                out[name] = [float(x) for x in xs]
                if not all(math.isfinite(x) for x in out[name]):
                    raise ValueError("finite numbers")
            elif p.type is bool:
                out[name] = raw if isinstance(raw, bool) else str(raw).lower() in ("1", "true", "on", "yes")
            elif p.type is int:
                if isinstance(raw, float) and not raw.is_integer():
                    raise ValueError("a whole number")
                out[name] = int(raw)
            elif p.type is float:
                out[name] = float(raw)
                if not math.isfinite(out[name]):
                    raise ValueError("a finite number")
            elif isinstance(p.type, str):  # a union such as "int|str": a number if it reads as one
                out[name] = parse_arg(str(raw)[:1000])
            else:
                out[name] = str(raw)[:1000]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"/{action.name}: {name} must be {_type_name(p.type)} ({exc})") from None
    return out


def with_snapshot(msg: dict[str, Any], snap: Snapshot) -> str:
    """``msg`` as JSON text with the snapshot's JSON (encoded once for every client) added."""
    return json.dumps(msg, separators=(",", ":"))[:-1] + ',"snap":' + snap.encoded() + "}"


class _Base:
    mode = "live"

    def __init__(self, history: History) -> None:
        self.history = history
        self.panels: list[dict[str, Any]] = []
        self.panels_seq = 0

    def _catch_up(self, state: dict[str, Any], msg: dict[str, Any]) -> bool:
        ds, state["dc"] = self.history.decisions_from(state.get("dc", 0), CHUNK)
        bs, state["bc"] = self.history.bars_from(state.get("bc", 0), CHUNK)
        msg["decisions"], msg["bars"] = ds, bs
        if state.get("pc") != self.panels_seq:
            state["pc"] = self.panels_seq
            msg["panels"] = self.panels
        return bool(ds or bs or "panels" in msg)

    def live_tick(
        self, state: dict[str, Any], snap: Snapshot | None, metrics: dict[str, Any], seq: int
    ) -> str | None:
        """A running run's update for one client: what it has not seen of the history, the
        newest snapshot ``snap`` and the metrics (``seq`` numbers their versions); None if
        nothing is new."""
        msg: dict[str, Any] = {"type": "tick"}
        changed = self._catch_up(state, msg)
        if state.get("mc") != seq:
            state["mc"] = seq
            msg["metrics"] = metrics
        if snap is not None and snap.seq != state.get("seq"):
            state["seq"] = snap.seq
            return with_snapshot(msg, snap)
        return json.dumps(msg, separators=(",", ":")) if changed else None


class LiveSource(_Base):
    """A running port: its publisher's snapshots, its decisions, its actions.

    Parameters
    ----------
    port:
        The :class:`~audio.port.api.VoicePort` (events are posted through its inbox).
    publisher:
        The :class:`~audio.live.profiler.snapshot.SnapshotPublisher` fed by the render thread.
    player:
        The :class:`~audio.live.device.LivePlayer` (timing metrics), or None.
    """

    def __init__(self, port: Any, publisher: Any, player: Any = None, history: History | None = None) -> None:
        super().__init__(history or History())
        self.port = port
        self.publisher = publisher
        self.player = player
        self.games = {port.game} | {str(s.name).split(".")[0] for s in port.engine.systems}
        self.metrics: dict[str, Any] = {}
        self.metrics_seq = 0
        self._metrics_at = 0.0
        self.actions = action_specs(port.actions, self.games)

    def update(self) -> None:
        """Collect what the render thread queued (server thread, every tick)."""
        self.history.drain(self.publisher)
        snap = self.publisher.latest
        if snap is not None and snap.panels is not None and snap.panels != self.panels:
            self.panels = snap.panels
            self.panels_seq += 1
        now = time.monotonic()
        player = self.player or self.port.player
        if player is not None and now - self._metrics_at >= 1.0:
            self._metrics_at = now
            m = player.metrics()
            keys = ("callback_p99_us", "budget_us", "render_p99_us", "deadline_misses", "underruns")
            self.metrics = {k: round(float(m[k]), 1) for k in keys}
            self.metrics["events_dropped"] = int(m["events_dropped"])
            self.metrics_seq += 1

    def hello(self, state: dict[str, Any]) -> dict[str, Any]:
        state.update(dc=0, bc=0, seq=-1, mc=-1, pc=-1)
        return {
            "type": "hello",
            "mode": self.mode,
            "game": self.port.game,
            "games": sorted(self.games),
            "actions": self.actions,
            "rate_hz": round(self.publisher.sample_rate / self.publisher.block / self.publisher.every, 2),
        }

    def tick(self, state: dict[str, Any]) -> str | None:
        return self.live_tick(state, self.publisher.latest, self.metrics, self.metrics_seq)

    def request(self, req: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
        kind = req.get("type")
        try:
            if kind == "action":
                return self._action(str(req.get("name", "")).lstrip("/"), req.get("values", {}))
            if kind == "listener":
                return self._listener(req)
        except Exception as exc:  # untrusted input: one rejected request, never the server
            return {"type": "result", "ok": False, "text": f"rejected: {exc}"}
        return {"type": "result", "ok": False, "text": f"unknown request {str(kind)[:40]!r}"}

    def _action(self, name: str, values: Any) -> dict[str, Any]:
        if name not in {a["name"] for a in self.actions}:
            known = ", ".join(a["name"] for a in self.actions)
            return {"type": "result", "ok": False, "text": f"no action /{name[:60]} in this run ({known})"}
        action = self.port.actions[name]
        event = action.build_named(coerce_values(action, values))
        if not self.port.post(event, when="now"):
            return {"type": "result", "ok": False, "text": f"/{name}: the inbox is full (dropped)"}
        shown = " ".join(f"{k}={v}" for k, v in values.items() if v not in (None, ""))
        return {"type": "result", "ok": True, "text": f"/{name} {shown} sent"}

    def _listener(self, req: dict[str, Any]) -> dict[str, Any]:
        snap = self.publisher.latest
        x, y, z, yaw = snap.extra["listener"] if snap is not None else (0.0, 0.0, 0.0, 0.0)
        fwd, right, turn = (float(req.get(k, 0.0)) for k in ("forward", "right", "turn"))
        if not all(math.isfinite(v) and abs(v) <= 1000 for v in (fwd, right, turn)):
            raise ValueError("forward/right (m) and turn (deg) must be numbers within +-1000")
        a = math.radians(yaw)
        x += -fwd * math.sin(a) + right * math.cos(a)
        z += fwd * math.cos(a) + right * math.sin(a)
        yaw = (yaw + turn + 180.0) % 360.0 - 180.0
        values = {"position": [round(x, 3), y, round(z, 3)], "yaw_deg": round(yaw, 2)}
        return self._action("listener", values)


class ReviewSource(_Base):
    """A finished run (``barkbus profile``): its whole history, and snapshots to seek in."""

    mode = "review"

    def __init__(
        self, history: History, snapshots: list[Snapshot], duration: float, game: str, note: str = ""
    ) -> None:
        super().__init__(history)
        self.snapshots = snapshots
        self.times = [s.t for s in snapshots]
        self._panel_at: list[int] = []  # index of the last snapshot with panels, at each snapshot
        last = -1
        for i, s in enumerate(snapshots):
            last = i if s.panels is not None else last
            self._panel_at.append(last)
        self.duration = duration
        self.game = game
        self.note = note

    def update(self) -> None:
        """Nothing arrives: the run is finished."""

    def hello(self, state: dict[str, Any]) -> dict[str, Any]:
        state.update(dc=0, bc=0, want=self.duration, sent=None, pc=-1)
        return {
            "type": "hello",
            "mode": self.mode,
            "game": self.game,
            "games": sorted({d["game"] for d in self.history.decisions[:5000]}),
            "actions": [],
            "duration": round(self.duration, 4),
            "note": self.note,
        }

    def _at(self, t: float) -> Snapshot | None:
        i = bisect.bisect_right(self.times, t) - 1
        return self.snapshots[i] if i >= 0 else (self.snapshots[0] if self.snapshots else None)

    def tick(self, state: dict[str, Any]) -> str | None:
        msg: dict[str, Any] = {"type": "tick"}
        changed = self._catch_up(state, msg)
        snap = self._at(float(state.get("want", 0.0)))
        if snap is not None and snap.seq != state.get("sent"):
            state["sent"] = snap.seq
            k = self._panel_at[bisect.bisect_right(self.times, snap.t) - 1]
            msg["panels"] = self.snapshots[k].panels if k >= 0 else []
            return with_snapshot(msg, snap)
        return json.dumps(msg, separators=(",", ":")) if changed else None

    def request(self, req: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
        if req.get("type") == "seek":
            try:
                t = float(req.get("t", 0.0))
            except (TypeError, ValueError):
                return {"type": "result", "ok": False, "text": "seek: t must be a number of seconds"}
            state["want"] = min(max(t, 0.0), self.duration) if math.isfinite(t) else 0.0
            return {"type": "seeked", "t": state["want"]}
        return {"type": "result", "ok": False, "text": "a finished run takes no actions"}
