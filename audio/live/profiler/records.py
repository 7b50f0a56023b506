"""The playing voices as numpy records: what the render thread copies for a profiler snapshot.

A :class:`VoiceRecords` table keeps, per voice graph and instance, the id, stream slot and start
of the voice that holds the instance, filled by the voice manager's ``start_hooks`` (Python work
once per voice start, as the start itself). A snapshot is then a fixed number of numpy calls per
voice graph, whatever the number of voices: which instances play (the bank's ``active`` and
``ended_at``), a gather of every shown quantity into one :data:`RECORD` array, the voices that
ended since the last snapshot (ids and end samples). No Python runs per voice on the render
thread for a snapshot; the rows the page shows are built from the records and the voices' fixed
fields (:class:`VoiceDesc`, made once per start) off the render thread (:func:`record_rows`).
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RECORD", "GraphInfo", "VoiceDesc", "VoiceRecords", "db", "record_rows", "split_tag"]

FLOOR_DB = -120.0
"""Levels below this are reported as silence (None)."""

RECORD = np.dtype(
    [
        ("id", np.int64),
        ("graph", np.int32),
        ("slot", np.int32),
        ("band", np.int32),
        ("stopped", np.bool_),
        ("started_at", np.int64),
        ("length", np.int64),
        ("sample_rate", np.float64),
        ("ipos", np.int64),
        ("peak", np.float32),
        ("centre_hz", np.float32),
        ("gain", np.float32),
        ("delay_s", np.float32),
        ("duck", np.float32),
    ]
)
"""One playing voice in a snapshot: its id, graph (index into the snapshot's graph list),
stream slot, ducking band, whether a stop was asked, start (engine samples), source length
(samples) and sample rate (Hz), source position (samples), output peak of the last block
(linear), PEAK centre (Hz) and gain (linear), distance delay (s) and ducking gain (linear); NaN
where the graph has no such parameter."""


def db(linear: float) -> float | None:
    """``20 log10(linear)`` in dB, or None below :data:`FLOOR_DB` (silence) or NaN."""
    if not linear > 10.0 ** (FLOOR_DB / 20.0):
        return None
    return round(20.0 * math.log10(linear), 2)


def split_tag(tag: str, meta: dict[str, Any]) -> tuple[str, str]:
    """(system, speaker) of a voice from its tag ``"<system>:<speaker>:<what>"`` or its meta."""
    parts = tag.split(":", 2) if ":" in tag else tag.split(" ", 2)
    system = parts[0] if parts and parts[0] else "voice"
    for key in ("ped", "speaker", "emitter"):
        if meta.get(key) is not None:
            return system, str(meta[key])
    return system, parts[1] if len(parts) > 1 else ""


@dataclass(frozen=True)
class VoiceDesc:
    """What the page shows of a voice that never changes while it plays (a plain, picklable
    copy of a :class:`~audio.core.voices.Voice`'s fixed fields, made once per voice start)."""

    id: int
    graph: str
    slot: int
    band: int
    tag: str
    sample_rate: float
    length: int
    started_at: int
    meta: dict[str, str]

    @classmethod
    def of(cls, v: Any) -> VoiceDesc:
        meta = v.meta or {}
        keep = {
            k: str(meta[k]) for k in ("clip", "take", "ped", "speaker", "emitter") if meta.get(k) is not None
        }
        return cls(
            v.id, v.graph, v.slot, v.band, v.tag, float(v.sample_rate), int(v.length), int(v.started_at), keep
        )

    @property
    def system_speaker(self) -> tuple[str, str]:
        return split_tag(self.tag, self.meta)


class GraphInfo:
    """Where to read a voice graph's shown parameters (looked up once per graph): the first
    PI20 (PEAK) node's centre and gain, the distance delay (Del0) of the submix it sends to, the
    bus it reaches and that bus's ducker; and the ids, slots and voices of its instances."""

    def __init__(self, index: int, name: str, bank: Any, mixer: Any) -> None:
        self.index, self.name = index, name
        self.bank = bank
        cap = int(bank.capacity)
        self.ids = np.zeros(cap, dtype=np.int64)
        """Id of the voice holding each instance (0: none known)."""
        self.slots = np.zeros(cap, dtype=np.int32)
        self.starts = np.zeros(cap, dtype=np.int64)
        self.descs = np.empty(cap, dtype=object)
        self.voices = np.empty(cap, dtype=object)
        self.centre: np.ndarray | None = None
        self.gain: np.ndarray | None = None
        for node in bank.by_id.values():
            if node.kind == "PI20":
                self.centre, self.gain = node.params["centre_hz"], node.params["gain"]
                break
        self.bus = ""
        submix: Any = None
        for _node, to in bank.routes():
            kind, _, name = str(to).partition(":")
            if kind == "bus" and not self.bus:
                self.bus = name
            elif kind == "submix" and submix is None:
                submix = mixer.submix_banks.get(name)
        self.delay: np.ndarray | None = None
        if submix is not None:
            for node in submix.by_id.values():
                if node.kind == "Del0":
                    self.delay = node.params["seconds"]
                    break
            if not self.bus:
                for _node, to in submix.routes():
                    kind, _, name = str(to).partition(":")
                    if kind == "bus":
                        self.bus = name
                        break
        self.ducker = mixer.duckers.get(self.bus)


class VoiceRecords:
    """The engine's voices as per-instance arrays, kept by a voice-manager start hook.

    Parameters
    ----------
    engine:
        The engine (``voices``, ``mixer``, ``now``); voices already playing are taken in.
    keep:
        Voice descriptions queued for a reader (:attr:`new`) at most.
    """

    def __init__(self, engine: Any, keep: int = 65536) -> None:
        self.engine = engine
        self.graphs: list[GraphInfo] = []
        self._by_name: dict[str, GraphInfo] = {}
        self.new: collections.deque[VoiceDesc] = collections.deque(maxlen=keep)
        """Descriptions of started voices not yet taken by a reader (the feed)."""
        self._reused: list[tuple[int, int, Any]] = []
        for v in engine.voices.playing():
            self.on_start(v)
        engine.voices.start_hooks.append(self.on_start)

    def detach(self) -> None:
        """Stop following starts (the hook is removed)."""
        hooks = self.engine.voices.start_hooks
        if self.on_start in hooks:
            hooks.remove(self.on_start)

    def graph(self, name: str) -> GraphInfo:
        info = self._by_name.get(name)
        if info is None:
            mixer = self.engine.mixer
            info = GraphInfo(len(self.graphs), name, mixer.voice_bank(name), mixer)
            self.graphs.append(info)
            self._by_name[name] = info
        return info

    def on_start(self, v: Any) -> None:
        """The start hook (render thread, once per voice start)."""
        g = self.graph(v.graph)
        inst = int(v.instance)
        old = int(g.ids[inst])
        if old and old != v.id:  # the instance was reclaimed and reused since the last snapshot
            prev = g.voices[inst]
            end = prev._ended if prev is not None and prev._ended >= 0 else v.started_at
            self._reused.append((old, int(end), g.descs[inst]))
        d = VoiceDesc.of(v)
        g.ids[inst] = v.id
        g.slots[inst] = v.slot
        g.starts[inst] = v.started_at
        g.descs[inst] = d
        g.voices[inst] = v
        self.new.append(d)

    def take(self, max_voices: int) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
        """The playing voices now (render thread): ``(records, descs, total, ended_ids,
        ended_at, ended_descs)``. ``records`` are the :data:`RECORD` of the ``max_voices``
        oldest playing voices in id order, ``descs`` their :class:`VoiceDesc` (object array),
        ``total`` how many play; the voices that ended since the last call with their end
        (engine samples; a voice cut at once ends "now") and descriptions. A fixed number of
        numpy calls per voice graph."""
        now = int(self.engine.now)
        parts: list[np.ndarray] = []
        dparts: list[np.ndarray] = []
        e_ids: list[np.ndarray] = []
        e_at: list[np.ndarray] = []
        e_desc: list[np.ndarray] = []
        if self._reused:
            reused, self._reused = self._reused, []
            e_ids.append(np.array([r[0] for r in reused], dtype=np.int64))
            e_at.append(np.array([r[1] for r in reused], dtype=np.int64))
            e_desc.append(np.array([r[2] for r in reused] + [None], dtype=object)[:-1])
        for g in self.graphs:
            bank = g.bank
            known = g.ids > 0
            playing = known & bank.active & (bank.ended_at < 0)
            gone = known & ~playing
            if gone.any():
                idx = np.flatnonzero(gone)
                ends = bank.ended_at[idx]
                e_ids.append(g.ids[idx])
                e_at.append(np.where(ends >= 0, ends, now).astype(np.int64))
                e_desc.append(g.descs[idx])
                g.ids[idx] = 0
                g.descs[idx] = None
                g.voices[idx] = None
            inst = np.flatnonzero(playing)
            if inst.shape[0] == 0:
                continue
            rec = np.empty(inst.shape[0], dtype=RECORD)
            rec["id"] = g.ids[inst]
            rec["graph"] = g.index
            rec["slot"] = g.slots[inst]
            band = bank.band[inst]
            rec["band"] = band
            rec["stopped"] = bank.rel_left[inst] > 0
            rec["started_at"] = g.starts[inst]
            rec["length"] = bank.src_len[inst]
            rec["sample_rate"] = bank.src_sample_rate[inst]
            rec["ipos"] = bank.ipos[inst]
            rec["peak"] = np.abs(bank.output[inst]).max(axis=(1, 2))
            rec["centre_hz"] = g.centre[inst] if g.centre is not None else np.nan
            rec["gain"] = g.gain[inst] if g.gain is not None else np.nan
            if g.delay is not None:
                rec["delay_s"] = g.delay[np.clip(g.slots[inst], 0, g.delay.shape[0] - 1)]
            else:
                rec["delay_s"] = np.nan
            if g.ducker is not None:
                env = g.ducker.env
                rec["duck"] = env[np.clip(band, 0, env.shape[0] - 1)]
            else:
                rec["duck"] = np.nan
            parts.append(rec)
            dparts.append(g.descs[inst])
        if parts:
            allrec = np.concatenate(parts)
            alldesc = np.concatenate(dparts)
            order = np.argsort(allrec["id"], kind="stable")[:max_voices]
            records, descs, total = allrec[order], alldesc[order], int(allrec.shape[0])
        else:
            records, descs, total = np.empty(0, dtype=RECORD), np.empty(0, dtype=object), 0
        if e_ids:
            ended_ids, ended_at = np.concatenate(e_ids), np.concatenate(e_at)
            ended_descs = np.concatenate(e_desc)
        else:
            ended_ids, ended_at = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
            ended_descs = np.empty(0, dtype=object)
        return records, descs, total, ended_ids, ended_at, ended_descs

    def playing_now(self) -> tuple[np.ndarray, np.ndarray]:
        """Ids and descriptions of every voice the table holds (end of a run)."""
        ids = [g.ids[g.ids > 0] for g in self.graphs]
        descs = [g.descs[g.ids > 0] for g in self.graphs]
        if not ids:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=object)
        return np.concatenate(ids), np.concatenate(descs)


def record_rows(
    records: np.ndarray, descs: Any, graphs: list[tuple[str, str]], sample_rate: float
) -> list[dict[str, Any]]:
    """The rows the page shows for ``records`` (any thread, not the render thread's business):
    ``descs`` gives each record's :class:`VoiceDesc` (a sequence aligned with the records; a
    None leaves the record out), ``graphs`` the (graph, bus) of each graph index."""
    rows = []
    for r, d in zip(records.tolist(), descs):
        if d is None:
            continue
        vid, gi, slot, band, stopped, start, length, vr, ipos, peak, centre, gain, delay, duck = r
        system, speaker = d.system_speaker
        vr = vr or 1.0
        row: dict[str, Any] = {
            "id": vid,
            "system": system,
            "speaker": speaker,
            "clip": d.meta.get("clip", ""),
            "take": d.meta.get("take", ""),
            "graph": graphs[gi][0],
            "bus": graphs[gi][1],
            "slot": slot,
            "t0": round(start / sample_rate, 4),
            "pos_s": round(ipos / vr, 3),
            "len_s": round(length / vr, 3),
            "peak_db": db(peak),
            "stopped": stopped,
        }
        if not math.isnan(centre) and not math.isnan(gain):
            row["peak_centre_hz"] = round(centre, 1)
            row["peak_gain_db"] = db(gain)
        if not math.isnan(delay):
            row["delay_ms"] = round(1e3 * delay, 2)
        if not math.isnan(duck):
            row["band"] = band
            row["duck_db"] = db(duck)
        rows.append(row)
    return rows
