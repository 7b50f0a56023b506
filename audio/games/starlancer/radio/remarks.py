"""The radio's own lines (spec 11.15): reminders, the missile warning, the rescue, kill remarks, taunts,
launch lines, and the player's own ``hud_`` lines.

Driven by what a scenario or a port posts (``starlancer.happen``: kill, hit, missile, eject, explode
of a pod, launch, lost, and the variables jump_ready / warp_ready / landing_cleared). Picks use the
game's ``rand()`` (``rand() % count``). Each remark is logged with its rule (``rule=``). Gates:
``DisableGenericComms`` mutes all but the jump reminders and the instructor's landing reminder;
``DisableTaunts`` the taunts.

File names: a voice prefix + the suffix with nothing between (``ban`` + ``dth_001.ut``); for the
hostile voices (``rus``) the suffix starts with ``_`` (``rus_tnt_001.ut``), as the spec's
``rus`` + ``_res_001.ut`` example shows [derived].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from audio.games.starlancer.radio.faces import (
    FACES,
    FLIGHT_INSTRUCTOR,
    RELIANT_OFFICER,
    YAMATO_OFFICER,
    moose,
)
from audio.games.starlancer.radio.radio import Line

if TYPE_CHECKING:
    from audio.games.starlancer.script.vm import Vm

__all__ = ["PLAYER_PREFIX", "Remarks"]

PLAYER_PREFIX = {"male": "mp", "female": "fp"}
"""The player's own lines (``hud_NNN``): ``mp`` + name for a male pilot, ``fp`` for a female one (11.15)."""


class Remarks:
    """``radio_remarks_frame`` and the event remarks of one mission."""

    def __init__(
        self,
        vm: Vm,
        decide: Callable[..., Any],
        training: bool = False,
        *,
        player_voice: str = "male",
        rescuer: int | None = None,
    ) -> None:
        """``player_voice``: male (``mp`` + name) or female (``fp`` + name), the player's own lines;
        ``rescuer``: the ship slot in wing place 5 (who says the rescue remark), None for none."""
        self.vm, self.decide, self.training = vm, decide, training
        if player_voice not in PLAYER_PREFIX:
            raise ValueError(f"player_voice {player_voice!r}: expected male or female")
        self.player = PLAYER_PREFIX[player_voice]
        self.rescuer = rescuer
        self.rescue_from: int | None = None
        self.vars = {"jump_ready": 0, "warp_ready": 0, "landing_cleared": 0}
        self.jump: dict[str, int] | None = None
        self.landing_next: int | None = None
        self.missile_homing = False
        self.missile_next = 0
        self.kill_next = 0
        self.taunt_next = 0
        self.land_next = 0
        self.backup_called = False

    # -- lines -----------------------------------------------------------------------------
    def _pick(self, stem: str, count: int) -> str:
        return f"{stem}{self.vm.rand() % count + 1:03d}"

    def _pilot_line(self, pilot: int, name: str, head: int = 0, flags: int = 5, expiry: int = -1) -> Line:
        from audio.games.starlancer.script.vm_commands import speaker_line

        line = speaker_line(self.vm, pilot, head, name + ".ut", flags)
        return replace(line, expiry=expiry)

    def _moose(self, name: str, flags: int = 5, expiry: int = -1) -> Line:
        return self._pilot_line(moose(self.vm.s.mission), name, 0, flags, expiry)

    def _say(self, line: Line, rule: str, mode: int, gate: str | None, now: int) -> str:
        line = replace(line, source=f"remark:{rule}")
        if line.expiry >= 1:
            line = replace(line, expiry=now + line.expiry)
        else:
            line = replace(line, expiry=-1)
        radio = self.vm.radio
        if (gate in ("generic", "taunts") and radio.generic_disabled) or (
            gate == "taunts" and radio.taunts_disabled
        ):
            which = "DisableTaunts" if gate == "taunts" and radio.taunts_disabled else "DisableGenericComms"
            self.decide("Gated", rule=rule, file=line.speech, speaker=line.speaker, reason=f"{which} is set")
            return "Gated"
        self.decide("Remark", rule=rule, file=line.speech, speaker=line.speaker)
        return radio.say(line, mode)

    def voice_line(self, ship: int, stem: str, count: int, head: int = 0, flags: int = 5) -> Line | None:
        """A ship's own line: its pilot's friendly voice (hostile side: the face's hostile voice)."""
        st = self.vm.ships[ship] if 0 <= ship < len(self.vm.ships) else None
        if st is None or not 0 <= st.pilot < len(FACES):
            return None
        face = FACES[st.pilot]
        hostile = st.hostile
        prefix = face.hostile_voice if hostile else face.friendly_voice
        if prefix is None:
            return None
        name = prefix + ("_" if hostile else "") + self._pick(stem, count)
        line = self._pilot_line(st.pilot, name, head, flags)
        return replace(line, speaker_kind="ship", speaker_object=ship)

    # -- each frame ------------------------------------------------------------------------
    def next_change(self, now: int, over: bool = False) -> int | None:
        """The first game tick, ``now`` or later, from which :meth:`frame` changes anything if no
        event comes first (``over`` and the variables stay as they are): a reminder that begins
        or resets, the next landing or jump call, missile warning or rescue; None when none is due."""
        due = []
        if self.vars["landing_cleared"] and not over:
            if self.landing_next is None:
                return now
            if not self.training:
                due.append(self.landing_next + 1)
        elif self.landing_next is not None:
            return now
        if (self.vars["jump_ready"] or self.vars["warp_ready"]) and not over:
            if self.jump is None:
                return now
            if not self.training:
                due.append(self.jump["next"])
        elif self.jump is not None:
            return now
        if self.missile_homing:
            due.append(self.missile_next + 1)
        if self.rescue_from is not None:
            due.append(self.rescue_from + 1001)
        return max(min(due), now) if due else None

    def frame(self, now: int, over: bool = False) -> None:
        """The landing reminder, the jump reminder, the missile warning and the rescue, in that order."""
        if self.vars["landing_cleared"] and not over:
            if self.landing_next is None:
                self.landing_next = now + 4500
                if self.training:
                    self._say(
                        self._pilot_line(FLIGHT_INSTRUCTOR, "trnprm_001"), "landing reminder", 1, None, now
                    )
            elif now > self.landing_next and not self.training:
                self.landing_next = now + 4500
                self._say(self._moose(self._pick("moolnd_", 3)), "landing reminder", 1, "generic", now)
        else:
            self.landing_next = None
        ready = self.vars["jump_ready"] or self.vars["warp_ready"]
        if ready and not over:
            if self.jump is None:
                self.jump = {"calls": 0, "next": now + 2000}
                if self.training:
                    self._say(
                        self._pilot_line(FLIGHT_INSTRUCTOR, "trnjmp_001"), "jump reminder", 1, None, now
                    )
                else:
                    stem = "jmp_" if self.vars["jump_ready"] else "wrp_"
                    self._say(self._moose(self._pick(stem, 4)), "jump reminder", 1, None, now)
            elif not self.training and now >= self.jump["next"]:
                k = self.jump["calls"]
                if k >= 4:
                    self.decide(
                        "PlayerJumps", rule="jump reminder", reason="four calls: the player's ship jumps"
                    )
                    self.vm.last_jump = self.vm.clock
                    self.jump = None
                    self.vars["jump_ready"] = self.vars["warp_ready"] = 0
                else:
                    self._say(self._moose(self._pick(f"moo_w{k + 1}", 4)), "jump reminder", 1, None, now)
                    self.jump = {"calls": k + 1, "next": now + 2000 + (300 if k + 1 == 4 else 0)}
        else:
            self.jump = None
        if self.missile_homing and now > self.missile_next:
            self.missile_next = now + 1000
            self._say(self._moose(self._pick("plck_", 8), expiry=500), "missile warning", 2, "generic", now)
        if self.rescue_from is not None and now > self.rescue_from + 1000:
            self.rescue_from = None
            self.rescue(now)

    def rescue(self, now: int) -> None:
        """The rescue remark: the suffix ``res_001..003`` is drawn first, then the pilot of the ship
        in wing place 5 says it as that pilot, behind the ship's voice prefix (no ship: nothing)."""
        suffix = self._pick("res_", 3)
        k = self.rescuer
        st = self.vm.ships[k] if k is not None and 0 <= k < len(self.vm.ships) else None
        if st is None or not 0 <= st.pilot < len(FACES):
            self.decide("Remark", rule="rescue", reason="no ship in wing place 5: nothing")
            return
        face = FACES[st.pilot]
        prefix = face.hostile_voice if st.hostile else face.friendly_voice
        if prefix is None:
            self.decide("Remark", rule="rescue", reason="the ship's pilot has no voice: nothing")
            return
        name = prefix + ("_" if st.hostile else "") + suffix
        self._say(self._pilot_line(st.pilot, name), "rescue", 2, "generic", now)

    # -- on events -------------------------------------------------------------------------
    def kill(self, victim: int, kind: str, now: int) -> None:
        """The player's kill is credited: ``kind`` fighter | torpedo | pod | other."""
        radio = self.vm.radio
        if kind == "pod":
            self._say(self._moose(self._pick("enmejt_", 3)), "kill remark", 2, "generic", now)
            return
        if now < self.kill_next:
            self.decide("Remark", rule="kill remark", reason="at most once per 600 ticks: skipped")
            return
        if radio.generic_disabled:
            self.decide("Gated", rule="kill remark", reason="DisableGenericComms is set (next time not set)")
            return
        self.kill_next = now + 600
        if radio.busy():
            self.decide("Remark", rule="kill remark", reason="the radio is busy: skipped")
            return
        if kind == "fighter":
            last = self.voice_line(victim, "dth_", 6, head=3, flags=6)
            if last is not None:
                self._say(replace(last, expiry=200), "kill remark (last words)", 1, "generic", now)
            self._say(self._moose(self._pick("plyrkl_", 9), expiry=500), "kill remark", 1, "generic", now)
        elif kind == "torpedo":
            self._say(self._moose(self._pick("trpkl_", 6), expiry=500), "kill remark", 2, "generic", now)

    def hit(self, attacker: int, now: int) -> None:
        """A hostile ship hits the player's ship: the taunt, at most once per 2000 ticks."""
        if now < self.taunt_next:
            return
        self.taunt_next = now + 2000
        line = self.voice_line(attacker, "tnt_", 13)
        if line is not None:
            self._say(line, "enemy taunt", 2, "taunts", now)

    def lost(self, ship: int, now: int) -> None:
        if self.vm.radio.busy():
            self.decide("Remark", rule="ship lost", reason="the radio is busy: skipped")
            return
        line = self.voice_line(ship, "dth_", 1, head=3, flags=6)
        if line is not None:
            self._say(line, "ship lost", 2, "generic", now)
        self._say(self._moose(self._pick("npcdth_", 4)), "ship lost", 1, "generic", now)

    def eject(self, ship: int, now: int) -> None:
        """A wingman's pilot ejects: the rescue timer is set (always), the pilot says ``ejt_001``."""
        self.rescue_from = now
        line = self.voice_line(ship, "ejt_", 1)
        if line is not None:
            self._say(line, "wingman ejected", 2, "generic", now)

    def eject_call(self, now: int) -> None:
        """Moose calls the pilot to eject (the ejection sequence): ``ejt_001..008``, queued, flags
        5, no expiry; the ejection's words are not gated. The sequence's timing is not in the spec:
        a port or scenario posts the moment (``happen eject_call``)."""
        self._say(self._moose(self._pick("ejt_", 8)), "eject call", 1, None, now)

    def pod_exploded(self) -> None:
        """The ejected pilot's pod explodes: no rescue remark."""
        if self.rescue_from is not None:
            self.rescue_from = None
            self.decide("Remark", rule="rescue", reason="the pod exploded: no rescue")

    def launch(self, carrier: str, now: int) -> None:
        if self.training:
            self._say(self._pilot_line(FLIGHT_INSTRUCTOR, "trnlch_001"), "launch line", 2, "generic", now)
        elif carrier == "reliant":
            self._say(
                self._pilot_line(RELIANT_OFFICER, self._pick("relbdg_", 6)), "launch line", 2, "generic", now
            )
        elif carrier == "yamato":
            self._say(
                self._pilot_line(YAMATO_OFFICER, self._pick("yambdg_", 5)), "launch line", 2, "generic", now
            )

    def taunt_answer(self, ship: int, now: int) -> None:
        """The player taunts (``hud_007..011``): a hostile fighter answers as a report in 300 ticks,
        ``_res_001.._res_024`` in its voice, or an ace's own lines (11.14)."""
        self.vm.radio.play_speech(f"{self.player}hud_{7 + self.vm.rand() % 5:03d}.ut")
        st = self.vm.ships[ship] if 0 <= ship < len(self.vm.ships) else None
        if st is None or not st.hostile or not 0 <= st.pilot < len(FACES):
            self.decide("Remark", rule="taunt answer", reason="not a hostile ship with a pilot: no answer")
            return
        ace = {10: ("hs_res_", 7), 15: ("ip_res_", 14), 16: ("np_res_", 10), 50: ("cm_res_", 10),
               131: ("al_res_", 11), 133: ("rd_res_", 6)}.get(st.pilot)  # fmt: skip
        if ace is not None:
            line = self._pilot_line(st.pilot, self._pick(*ace))
        else:
            own = self.voice_line(ship, "res_", 24)
            if own is None:
                return
            line = own
        line = replace(line, speaker_kind="ship", speaker_object=ship, source="report:taunt")
        self.vm.radio.report(line, now + 300)

    def wingman(self, ship: int, order: str, busy: bool, armour: int, now: int) -> None:
        """A wingman command (11.14): the player's ``hud_`` line at once, the answer as a report."""
        if order == "taunt":
            self.taunt_answer(ship, now)
            return
        hud = {
            "attack": "hud_001",
            "backoff": "hud_002",
            "help": "hud_003",
            "status": "hud_004",
            "scold": "hud_005",
            "praise": "hud_006",
        }[order]
        self.vm.radio.play_speech(f"{self.player}{hud}.ut")
        st = self.vm.ships[ship] if 0 <= ship < len(self.vm.ships) else None
        if st is None or not 0 <= st.pilot < len(FACES):
            return
        full = FACES[st.pilot].full_replies
        ranges = {
            "attack": ((1, 4), (5, 8), (5, 8), (9, 13)),
            "backoff": ((1, 4), (5, 9), (1, 6), (7, 15)),
            "help": ((1, 4), (5, 8), (1, 6), (7, 14)),
        }
        if order == "status":
            lv = max(0, min(2, armour))
            lo, hi = (((1, 4), (5, 8), (9, 11)), ((1, 7), (8, 15), (19, 24)))[full][lv]
            stem = "_status_"
        elif order in ("scold", "praise"):
            lo, hi = (1, (12 if full else 4) if order == "scold" else (8 if full else 4))
            stem = "_cmon_" if order == "scold" else "_iou_"
        else:
            lo, hi = ranges[order][(2 if full else 0) + (0 if busy else 1)]
            stem = {"attack": "_amt_", "backoff": "_bkoff_", "help": "_hlpme_"}[order]
        voice = FACES[st.pilot].friendly_voice
        if voice is None:
            return
        name = f"{voice}{stem}{lo + self.vm.rand() % (hi - lo + 1):03d}.ut"
        line = self._pilot_line(st.pilot, name[:-3])
        line = replace(line, speaker_kind="ship", speaker_object=ship, source=f"report:{order}")
        self.vm.radio.report(line, now + (250 if order == "status" else 300))

    def _bridge(self, carrier: str, stem: str, lo: int, hi: int, width: int = 3) -> Line:
        yam = carrier == "yamato"
        pilot, prefix = (YAMATO_OFFICER, "yam") if yam else (RELIANT_OFFICER, "rel")
        n = lo + self.vm.rand() % (hi - lo + 1)
        line = self._pilot_line(pilot, f"{prefix}{stem}{n:0{width}d}")
        film = "pilots\\Yam_Brdge_Off.fm8" if yam else "pilots\\Rel_Brdge_Off.fm8"
        return replace(line, film=film)

    def permission_to_land(self, carrier: str, success: int, now: int) -> None:
        """PERMISSION TO LAND (11.14): at most once per 500 ticks; the player's ``hud_012``, then
        the instructor (training, when cleared) or the carrier's bridge as a report in 300 ticks:
        by ``success`` (0 success or better, 1 partial, 2 other), or a denial when not cleared."""
        if now < self.land_next:
            self.decide("Remark", rule="permission to land", reason="at most once per 500 ticks: not heard")
            return
        self.land_next = now + 500
        self.vm.radio.play_speech(f"{self.player}hud_012.ut")
        cleared = bool(self.vars["landing_cleared"])
        if self.training:
            if not cleared:
                return
            line = replace(self._pilot_line(FLIGHT_INSTRUCTOR, "trnglnd_001"), film="pilots\\VirtFlt_Ins.fm8")
        elif not cleared:
            line = self._bridge(carrier, "_lnd_den_", 1, 4, 2)
        else:
            lo, hi = ((1, 9), (10, 16), (17, 24))[max(0, min(2, success))]
            line = self._bridge(carrier, "_lnd_", lo, hi)
        self.vm.radio.report(replace(line, source="report:land"), now + 300)

    def request_backup(self, carrier: str, available: bool, now: int) -> bool:
        """REQUEST BACKUP (11.14): ``hud_013``; ``_reqbk_001..007`` when backup is available and not
        yet called this mission (then True: the caller posts PlayerWantsBackup), else ``008..014``.
        The answering voice is the carrier's bridge [derived: the spec names no speaker]."""
        self.vm.radio.play_speech(f"{self.player}hud_013.ut")
        granted = available and not self.backup_called
        self.backup_called = self.backup_called or granted
        line = self._bridge(carrier, "_reqbk_", *((1, 7) if granted else (8, 14)))
        self.vm.radio.report(replace(line, source="report:backup"), now + 300)
        return granted
