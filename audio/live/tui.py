"""Interactive audition (curses): fire speech values and barks, move emitters, watch decisions.

Keys
----
Tab / Shift-Tab select the speaker (ped or crew); 1-9 fire the speaker's value/bark number
k (the list is on screen); Left/Right turn the emitter around the listener (15 degrees),
Up/Down change its distance (x1.25); + / - player speed (1 m/s); z zombie mode; p next
phase; n spawn a ped; s stop the speaker; ``:`` type any action (``:tone/on ann hello``,
``:event tone.on {"speaker": "ann"}``; each game's addresses are listed by ``:help``); q quits.

Game-specific actions go through small adapters built on the action registry
(``port.actions``, :class:`audio.core.plugin.Action`): an action whose game module is not loaded is shown as
unavailable with the reason, the rest keeps working. The live panel shows the voices
playing (id, graph, stream slot, tag, clip/take from the voice's meta, level in dBFS of its
last block), the game systems' own panels (a system may define ``snapshot() ->
dict[str, list[str]]``, e.g. its queue and cooldown timers), and the last decisions with
their reason codes (via ``engine.bus.on_decision``).
"""

from __future__ import annotations

import collections
import json
import math
import os
import shlex
import time
from typing import Any

from audio.core.bus import Decision
from audio.core.fields import PortError, make_event
from audio.core.plugin import GameAdapter, parse_arg

__all__ = [
    "Audition",
    "GameAdapter",
    "adapter_for",
    "run_tui",
]


def adapter_for(port: Any) -> GameAdapter:
    """The TUI adapter of ``port.game`` from the game registry (a plain :class:`GameAdapter`
    for a port that is not one registered game, e.g. a scenario mixing games)."""
    from audio.games import all_games

    for g in all_games():
        if g.name == port.game and g.tui is not None:
            return g.load("tui")(port)
    return GameAdapter(port)


def _voice_rows(engine: Any) -> list[str]:
    rows = []
    for v in engine.voices.playing():
        meta = v.meta or {}
        db = v.peak_dbfs
        level = "   -" if db is None else (f"{db:6.1f}" if math.isfinite(db) else "  -inf")
        clip = meta.get("clip", "")
        take = meta.get("take", "")
        rows.append(
            f"{v.id:>5} {v.graph[:22]:<22} {v.slot:>4} {str(clip)[:18]:<18} {take!s:>4} {level} "
            f"{'stop' if v.stopped else 'play'} {v.tag[:30]}"
        )
    return rows or ["(no voice playing)"]


class Audition:
    """The TUI's model: key handling and screen lines, independent of curses."""

    AZ_STEP = 15.0

    def __init__(
        self, port: Any, player: Any = None, osc: Any = None, adapter: GameAdapter | None = None
    ) -> None:
        self.port = port
        port.engine.mixer.meters = True  # the voice rows' peaks
        self.player = player
        self.osc = osc
        self.adapter = adapter or adapter_for(port)
        self.sel = 0
        self.azimuth: dict[str, float] = {}
        self.distance: dict[str, float] = {}
        self.speed_mps = 0.0
        self.zombie_on = False
        self.phase_no = 1
        self.message = "press a key (q quits)"
        self.decisions: collections.deque[Decision] = collections.deque(maxlen=200)
        port.on_decision(self.decisions.append)
        self.command: str | None = None
        self._timing = ""
        self._timing_at = -1.0

    @property
    def speaker(self) -> str | None:
        sp = self.adapter.speakers
        return sp[self.sel % len(sp)] if sp else None

    def _place(self, speaker: str) -> str:
        az = math.radians(self.azimuth.setdefault(speaker, 0.0))
        d = self.distance.setdefault(speaker, 5.0)
        return self.adapter.move(speaker, (-d * math.sin(az), 0.0, d * math.cos(az)))

    def help_text(self) -> str:
        """What ``:help`` shows: the running game's actions with their arguments."""
        actions = self.port.actions
        names = sorted(n for n in actions if n.startswith(self.adapter.game + "/") or "/" not in n)
        usage = "  ".join(actions[n].usage() for n in names)
        return f"commands: {usage}  event KIND JSON  help" if usage else "commands: event KIND JSON  help"

    def legend(self) -> str:
        """The keys line: the common keys and the ones the running game answers."""
        optional = [
            ("n spawn", "spawn"),
            ("s stop", "stop"),
            ("+/- speed", "speed"),
            ("z zombie", "zombie"),
            ("p phase", "phase"),
        ]
        extra = "  ".join(label for label, f in optional if f in self.adapter.features)
        return (
            "keys: Tab speaker  1-9 fire  <-/-> azimuth  up/down distance  "
            + (extra + "  " if extra else "")
            + ": command (:help)  q quit"
        )

    def run_command(self, text: str) -> str:
        """Apply ``:``-line ``text``: ``ACTION args...``, ``event KIND JSON`` or ``help``."""
        text = text.strip().lstrip(":").strip()
        if not text:
            return ""
        if text in ("help", "?"):
            return self.help_text()
        if text.startswith("event "):
            _, _, rest = text.partition(" ")
            kind, _, js = rest.strip().partition(" ")
            try:
                fields = json.loads(js or "{}")
                if not isinstance(fields, dict):
                    raise PortError("event fields must be a JSON object")
                self.port.post(make_event(kind, **fields), when="now")
            except (PortError, json.JSONDecodeError) as exc:
                return f"rejected: {exc}"
            return f"event {kind}"
        try:
            parts = shlex.split(text)
        except ValueError as exc:
            return f"rejected: {exc}"
        name = parts[0].lstrip("/")
        return self.adapter.post(name, *[parse_arg(p) for p in parts[1:]])

    def key(self, k: str) -> bool:
        """Handle one key (curses key names: "KEY_LEFT", "\\t", "a"); False to quit."""
        if self.command is not None:
            if k in ("\n", "KEY_ENTER"):
                self.message, self.command = self.run_command(self.command), None
            elif k in ("\x1b",):
                self.command, self.message = None, "command cancelled"
            elif k in ("KEY_BACKSPACE", "\x7f", "\b"):
                self.command = self.command[:-1]
            elif len(k) == 1 and k.isprintable():
                self.command += k
            return True
        sp = self.speaker
        if k == "q":
            return False
        if k == ":":
            self.command = ""
        elif k == "\t":
            self.sel += 1
        elif k == "KEY_BTAB":
            self.sel -= 1
        elif k.isdigit() and k != "0":
            self.message = self.adapter.fire(sp, int(k) - 1) if sp else "no speaker: spawn one with n"
        elif k in ("KEY_LEFT", "KEY_RIGHT") and sp:
            step = self.AZ_STEP if k == "KEY_LEFT" else -self.AZ_STEP
            self.azimuth[sp] = (self.azimuth.get(sp, 0.0) + step + 180.0) % 360.0 - 180.0
            self.message = self._place(sp)
        elif k in ("KEY_UP", "KEY_DOWN") and sp:
            f = 1.25 if k == "KEY_UP" else 0.8
            self.distance[sp] = min(500.0, max(0.5, self.distance.get(sp, 5.0) * f))
            self.message = self._place(sp)
        elif k in ("+", "="):
            self.speed_mps = min(50.0, self.speed_mps + 1.0)
            self.message = self.adapter.speed(self.speed_mps)
        elif k == "-":
            self.speed_mps = max(0.0, self.speed_mps - 1.0)
            self.message = self.adapter.speed(self.speed_mps)
        elif k == "z":
            self.zombie_on = not self.zombie_on
            self.message = self.adapter.zombie(self.zombie_on)
        elif k == "p":
            self.phase_no = self.phase_no % 3 + 1
            self.message = self.adapter.phase(self.phase_no)
        elif k == "n":
            self.message = self.adapter.spawn()
        elif k == "s" and sp:
            self.message = self.adapter.stop(sp)
        return True

    def lines(self, width: int, height: int) -> list[str]:
        """The screen, top to bottom."""
        port, ad = self.port, self.adapter
        out = []
        now = time.monotonic()
        if self.player is not None and now - self._timing_at >= 1.0:  # percentiles cost: once a second
            m = self.player.metrics()
            self._timing = (
                f"cb p99 {m['callback_p99_us']:.0f}us  render p99 {m['render_p99_us']:.0f}us  "
                f"misses {m['deadline_misses']}  underruns {m['underruns']}"
            )
            self._timing_at = now
        timing = self._timing
        out.append(f"barkbus audition  game {port.game}  t {port.now:8.3f} s  {timing}")
        if self.osc is not None:
            s = self.osc.stats
            out.append(
                f"OSC {self.osc.address[0]}:{self.osc.address[1]}  received {s.received} "
                f"accepted {s.accepted} rejected {s.rejected} dropped {s.dropped}"
            )
        spk = "  ".join(f"[{s}]" if s == self.speaker else s for s in ad.speakers) or "(none: n spawns a ped)"
        out.append(f"speakers: {spk}")
        sp = self.speaker
        if sp is not None:
            out.append(
                f"emitter {sp}: azimuth {self.azimuth.get(sp, 0.0):+.0f} deg  "
                f"distance {self.distance.get(sp, 5.0):.1f} m  speaking {port.is_speaking(sp)}"
            )
        state = [
            (f"player speed {self.speed_mps:.0f} m/s", "speed"),
            (f"zombie {'on' if self.zombie_on else 'off'}", "zombie"),
            (f"phase {self.phase_no}", "phase"),
        ]
        shown = "  ".join(s for s, f in state if f in ad.features)
        if shown:
            out.append(shown)
        out.append(self.legend())
        out.append("fire: " + "  ".join(f"{i + 1}={label}" for i, (_, label) in enumerate(ad.choices)))
        for line in ad.status():
            if "unavailable" in line:
                out.append(line)
        out.append("-- voices: id graph slot clip take dBFS state tag " + "-" * 20)
        out.extend(_voice_rows(port.engine)[:8])
        for s in port.engine.systems:
            for title, rows in s.snapshot().items():
                out.append(f"-- {s.name} {title} " + "-" * 20)
                out.extend(str(r) for r in rows[:6])
        out.append("-- last decisions " + "-" * 40)
        room = max(1, height - len(out) - 2)
        for d in list(self.decisions)[-room:]:
            detail = " ".join(f"{k}={v}" for k, v in d.detail.items())
            out.append(f"{d.t:8.3f} {d.system} {d.outcome} {detail}")
        prompt = f":{self.command}" if self.command is not None else self.message
        out = out[: height - 1]
        out.append(prompt)
        return [line[: width - 1] for line in out]


def _key_name(stdscr: Any) -> str | None:
    import curses

    try:
        k = stdscr.get_wch()
    except curses.error:
        return None
    if isinstance(k, int):
        return curses.keyname(k).decode("ascii", "replace")
    return k


def run_tui(port: Any, player: Any = None, *, seconds: float | None = None, osc: Any = None) -> None:
    """Run the curses audition until ``q`` (or ``seconds`` of wall time)."""
    import curses

    model = Audition(port, player, osc)
    t_end = None if seconds is None else time.monotonic() + seconds

    def loop(stdscr: Any) -> None:
        curses.curs_set(0)
        stdscr.timeout(100)
        while t_end is None or time.monotonic() < t_end:
            h, w = stdscr.getmaxyx()
            stdscr.erase()
            for y, line in enumerate(model.lines(w, h)):
                try:
                    stdscr.addstr(y, 0, line)
                except curses.error:
                    pass
            stdscr.refresh()
            k = _key_name(stdscr)
            if k is not None and not model.key(k):
                return

    for var in ("LINES", "COLUMNS"):  # use the terminal's real size, not stale variables
        os.environ.pop(var, None)
    try:
        curses.wrapper(loop)
    except KeyboardInterrupt:
        pass
