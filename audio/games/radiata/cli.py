"""``barkbus radiata ...``: inspect Radiata Stories RMF1 dialogue files.

``barkbus radiata dump [FILE.rmf] [--packet N] [--json]`` prints one record per message with the
fields of the spec's extraction (packet, index, speaker_index, character_id, bustup_mode, voice,
text, visible_glyphs, glyph_count, speed, reveal_frames, signals, wait, choices) and the records
the talk reads beside the text (name_window, propers, mouth, traps), then every mismatch between
declared and counted glyphs and every other problem found (each error-trap record among them,
with its offset). Without FILE it dumps the demo install's file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from audio.core.errors import FormatError
from audio.games.radiata.formats.rmf import message_record, read_rmf
from audio.games.radiata.talk.typewriter import reveal_frames

__all__ = ["demo_rmf", "dump_records", "register"]


def demo_rmf() -> Path:
    """The demo install's RMF file (built by ``tools/build_radiata_demo.py``)."""
    return Path(__file__).resolve().parent / "demo" / "town.rmf"


def dump_records(
    data: bytes,
    path: str,
    packet: int | None = None,
    region: str = "auto",
    default_speed: float | None = None,
) -> dict[str, Any]:
    """The dump as a JSON-ready dict: file facts, ``records`` (one per message), ``absent``
    packets, ``mismatches`` (declared vs counted glyphs, budgets) and other ``issues``."""
    f = read_rmf(data, path, region)
    if packet is not None:
        f.packet(packet)
    indices = [packet] if packet is not None else range(len(f.packets))
    records: list[dict[str, Any]] = []
    mismatches: list[str] = []
    issues = list(f.issues)
    for i in indices:
        if f.packets[i] is None:
            continue
        s = f.script(i)
        records.extend(message_record(m, reveal_frames(m.steps, default_speed)) for m in s.messages)
        mismatches.extend(s.mismatches())
        issues.extend(s.issues + [f"packet {i} message {m.index}: {t}" for m in s.messages for t in m.issues])
        issues.extend(
            f"packet {i} message {m.index}: {len(m.voices)} clips (voice shows the first)"
            for m in s.messages
            if len(m.voices) > 1
        )
    h = f.header
    return {
        "file": path,
        "region": f.region,
        "version": h.version,
        "packets": h.packet_count,
        "absent": [i for i, p in enumerate(f.packets) if p is None],
        "tiles": len(f.tiles) // 512,
        "records": records,
        "mismatches": mismatches,
        "issues": issues,
    }


def _line(r: dict[str, Any]) -> str:
    who = f"speaker {r['speaker_index']}"
    if r["character_id"] is not None:
        who += f" (chr {r['character_id']}, bustup mode {r['bustup_mode']})"
    v = r["voice"]
    voice = (
        "no voice"
        if v is None
        else (
            f"voice ch {v['channel']}"
            + (" auto+lip-sync" if v["lip_sync"] else "")
            + f" sound {v['sound_id']}"
        )
    )
    speed = "speed -" if r["speed"] is None else f"speed {r['speed']:g}"
    reveal = "?" if r["reveal_frames"] is None else str(r["reveal_frames"])
    w = r["wait"]
    wait = (
        "no wait"
        if w is None
        else ("wait infinite" if w["infinite"] else f"wait {w['duration']} f")
        + (" cursor" if w["cursor"] else "")
    )
    parts = [
        f"{r['packet']:>4}.{r['index']:<3}",
        who,
        voice,
        f"{speed} -> {reveal} f",
        wait,
        f"glyphs {r['visible_glyphs']}/{r['glyph_count'] if r['glyph_count'] is not None else '-'}",
    ]
    if r["signals"]:
        parts.append("signals " + " ".join(f"{s['value']}@{s['after_glyphs']}" for s in r["signals"]))
    if r["choices"]:
        parts.append("choices " + " | ".join(r["choices"]))
    n = r["name_window"]
    if n is not None:
        plate = (
            f"plate {n['plate_style']} t{n['template']} y{n['y_offset']}" if n["plate_style"] else "no plate"
        )
        parts.append(plate + (f" name #{n['name_id']}" if n["name_id"] else ""))
    if r["propers"]:
        parts.append("proper " + " ".join(p["payload"] for p in r["propers"]))
    if r["mouth"]:
        parts.append("mouth " + " ".join(f"{m['record']}@{m['index']}" for m in r["mouth"]))
    return "  ".join(parts) + f"\n        {json.dumps(r['text'], ensure_ascii=False)}"


def _dump(args: argparse.Namespace) -> int:
    path = args.file or demo_rmf()
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        hint = " (run tools/build_radiata_demo.py)" if args.file is None else ""
        raise FormatError(path, None, "a readable RMF1 file" + hint, str(exc)) from None
    out = dump_records(data, str(path), args.packet, args.region, args.default_speed)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    print(
        f"{out['file']}: {out['region']} RMF1 v0x{out['version']:X}, {out['packets']} packets "
        f"({len(out['absent'])} absent), {out['tiles']} glyph tiles, {len(out['records'])} messages"
    )
    for r in out["records"]:
        print(_line(r))
    for m in out["mismatches"]:
        print(f"mismatch: {m}")
    for m in out["issues"]:
        print(f"issue: {m}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``radiata`` command group."""
    p = subparsers.add_parser(
        "radiata",
        help="Radiata Stories RMF1 dialogue: dump messages as voice cues",
        description="Inspect Radiata Stories RMF1 dialogue files (decompressed payloads).",
    )
    sub = p.add_subparsers(dest="radiata_cmd", required=True)
    d = sub.add_parser(
        "dump",
        help="one record per message (speaker, voice, text, timing, wait, choices)",
        description="Dump every message of an RMF1 file with the spec's extraction fields; "
        "report declared/counted glyph mismatches. Default: the demo install.",
    )
    d.add_argument("file", nargs="?", type=Path, help="RMF1 file (default: the demo install's town.rmf)")
    d.add_argument("--packet", type=int, default=None, help="only this packet")
    d.add_argument("--json", action="store_true", help="JSON instead of text")
    d.add_argument("--region", choices=["auto", "EN", "JP"], default="auto", help="force the header layout")
    d.add_argument(
        "--default-speed",
        type=float,
        default=None,
        help="glyphs/frame for messages without a TextSpeed record (unknown; default: none)",
    )
    d.set_defaults(func=_dump)
