"""``barkbus starlancer ...``: disassemble mission scripts, list a mission's radio, ``.ut`` speech.

``disasm MISSION.dte [--json]`` every routine (trigger i / part name) with resolved names;
``disasm --raw FILE`` one routine block given as bytes (block + constant table at offset 0);
``comms MISSION.dte [--json]`` the speech events (spec 9); ``hog FILE.hog`` list an archive;
``decode FILE.ut -o out.wav`` / ``encode IN.wav -o FILE.ut`` the Digital Anvil LPC codec.
A mission may be a loose file (RefPack'd or not) or ``ARCHIVE.hog`` with ``--member``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from audio.core.errors import FormatError

__all__ = ["load_mission_arg", "register"]


def load_mission_arg(path: Path, member: str | None = None) -> tuple[Any, str]:
    """``(Dte, mission name)`` from a loose ``.dte`` or a ``.hog`` (``member``, or its only ``.dte``)."""
    from audio.games.starlancer.formats.dte import load_mission
    from audio.games.starlancer.formats.hog import read_hog

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(path, None, "a readable mission file", exc.strerror) from None
    if data[:4] == b"BIGF":
        hog = read_hog(data, str(path))
        if member is None:
            dtes = [n for n in hog.names() if n.lower().endswith(".dte")]
            if len(dtes) != 1:
                raise FormatError(
                    path,
                    None,
                    f"--member NAME (the archive holds {len(dtes)} .dte members: {', '.join(dtes[:8])})",
                )
            member = dtes[0]
        return load_mission(hog.read(member, game_name=False), f"{path}:{member}"), member
    return load_mission(data, str(path)), path.name


def _hexbytes(buf: bytes, ip: int, size: int) -> str:
    b = buf[ip : ip + min(size, 6)].hex(" ").upper()
    return b + (" .." if size > 6 else "")


def _ins_text(ins: Any, buf: bytes) -> str:
    ops = " ".join(str(o) for o in ins.operands if not isinstance(o, list))
    desc = f"{ins.mnemonic} {ops}".strip()
    if ins.target is not None:
        desc += f" -> {ins.target}"
    if ins.arms:
        desc += " arms " + ", ".join(f"{t} if roll < {th}" for t, th, _ in ins.arms)
    note = ins.call.text() if ins.call is not None else ""
    return f"  {ins.ip:5d}  {_hexbytes(buf, ins.ip, ins.size):<20s} {desc:<34s} {note}".rstrip()


def _print_dis(title: str, dis: Any, buf: bytes) -> None:
    print(f"== {title}  (length {dis.length}, {len(dis.constants)} constant dwords, {dis.size} bytes)")
    for ins in dis.ordered():
        print(_ins_text(ins, buf) + (f"   [if {' and '.join(ins.guard)}]" if ins.guard and ins.call else ""))
    for a, b in dis.slack:
        print(f"  slack {a}..{b}: {buf[a:b].hex(' ').upper()}")
    for ip, msg in dis.errors:
        print(f"  ERROR @{ip}: {msg}")


def _dis_json(label: str, dis: Any, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "routine": label,
        **extra,
        "length": dis.length,
        "constants": list(dis.constants),
        "instructions": [i.to_json() for i in dis.ordered()],
        "slack": [list(s) for s in dis.slack],
        "errors": [{"ip": ip, "error": m} for ip, m in dis.errors],
    }


def _disasm(args: argparse.Namespace) -> int:
    from audio.games.starlancer.script.disasm import disassemble, disassemble_routine

    if args.raw is not None:
        buf = args.raw.read_bytes()
        dis = disassemble(buf, path=str(args.raw))
        if args.json:
            print(json.dumps(_dis_json("raw", dis, {"file": str(args.raw)})))
        else:
            _print_dis(f"raw {args.raw}", dis, buf)
        return 1 if dis.errors else 0
    if args.mission is None:
        raise FormatError(None, None, "a MISSION.dte or --raw FILE")
    dte, _name = load_mission_arg(args.mission, args.member)
    errors: list[str] = []
    out, bad = [], bool(errors)
    for r in dte.routines(errors):
        dis = disassemble_routine(dte, r)
        bad |= bool(dis.errors)
        extra: dict[str, Any] = {"block": r.block}
        if r.kind == "trigger":
            t = dte.triggers[r.index]
            from audio.games.starlancer.script.commands import condition_name

            oid = dte.trigger_subject(r.index)
            extra.update(
                condition=condition_name(t.condition), subject=None if oid is None else dte.object_name(oid)
            )
        if args.json:
            out.append(_dis_json(r.label, dis, extra))
        else:
            head = r.label + (
                f" [{extra['condition']} on {extra['subject']}]" if "condition" in extra else ""
            )
            _print_dis(f"{head} at script+0x{r.block:X}", dis, dte.script[r.block : r.end])
    if args.json:
        print(json.dumps({"mission": str(args.mission), "routines": out, "errors": errors}))
    for e in errors:
        print(f"ERROR {e}", file=sys.stderr)
    return 1 if bad or errors else 0


def _comms(args: argparse.Namespace) -> int:
    from audio.games.starlancer.formats.hog import open_hog
    from audio.games.starlancer.script.comms import mission_comms

    dte, name = load_mission_arg(args.mission, args.member)
    hog = None
    speech = args.speech or next(
        (
            p
            for p in (
                args.mission.parent / "ms_speech" / "msspeech.hog",
                args.mission.parent / "msspeech.hog",
            )
            if p.exists()
        ),
        None,
    )
    if speech is not None:
        hog = open_hog(speech)
    res = mission_comms(dte, name, hog)
    if args.json:
        print(
            json.dumps(
                {
                    "mission": name,
                    "events": [e.to_json() for e in res.events],
                    "edges": [vars(e) for e in res.edges],
                    "errors": res.errors,
                }
            )
        )
    else:
        for e in res.events:
            print(e.text())
        for ed in res.edges:
            print(f"{ed.routine} @{ed.ip}: {ed.kind} part {ed.part}")
        for err in res.errors:
            print(f"ERROR {err}")
    return 1 if res.errors else 0


def _hog(args: argparse.Namespace) -> int:
    from audio.games.starlancer.formats.hog import expand, open_hog

    hog = open_hog(args.file)
    print(
        f"{args.file}: {len(hog.entries)} members (header counts {hog.declared}"
        + (f", {hog.filler} filler record(s) skipped" if hog.filler else "")
        + ")"
    )
    for d in hog.duplicates:
        print(f"  duplicate name {d!r}: the first in directory order is used")
    for e in hog.entries:
        packed = hog.raw(e)[:2] == b"\x10\xfb"
        print(f"  {e.offset:10d} {e.size:9d} {'R' if packed else ' '} {e.name}")
        if args.extract:
            args.extract.mkdir(parents=True, exist_ok=True)
            (args.extract / e.name.replace("/", "_").replace("\\", "_")).write_bytes(
                expand(hog.raw(e), f"{args.file}:{e.name}")
            )
    return 0


def _decode(args: argparse.Namespace) -> int:
    import numpy as np

    from audio.core.outputs import check_outputs, is_stdio, write_audio
    from audio.games.starlancer.formats.ut import decode_ut

    check_outputs({"-o": (args.output, "audio")})
    pcm = decode_ut(args.file.read_bytes(), str(args.file))
    write_audio(args.output, np.asarray(pcm, np.float32).reshape(-1, 1), 22050)
    print(
        f"{args.output}: {len(pcm)} samples at 22050 Hz ({len(pcm) / 22050:.3f} s)",
        file=sys.stderr if is_stdio(args.output) else sys.stdout,
    )
    return 0


def _encode(args: argparse.Namespace) -> int:
    import numpy as np
    import soundfile as sf

    from audio.games.starlancer.formats.ut import decode_ut, encode_ut

    x, sample_rate = sf.read(args.file, dtype="float32", always_2d=True)
    data = encode_ut(x.mean(axis=1), int(sample_rate), tag=args.tag)
    args.output.write_bytes(data)
    y = decode_ut(data, str(args.output))
    ref = np.asarray(sf.read(args.file, dtype="float32", always_2d=True)[0].mean(axis=1))
    seconds = len(y) / 22050
    kbps = 8 * len(data) / max(seconds, 1e-9) / 1000
    msg = f"{args.output}: {len(data)} bytes for {seconds:.3f} s ({kbps:.1f} kbit/s)"
    if int(sample_rate) == 22050 and len(ref) == len(y):
        err = float(np.sum((ref - y) ** 2))
        msg += f", waveform SNR {10 * np.log10(float(np.sum(ref**2)) / max(err, 1e-20)):.2f} dB"
    print(msg)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``starlancer`` command group."""
    p = subparsers.add_parser(
        "starlancer",
        help="Starlancer: mission scripts (.DTE), radio, .ut speech",
        description="Inspect Starlancer mission scripts and speech in the game's layout.",
    )
    sub = p.add_subparsers(dest="starlancer_cmd", required=True)
    a = sub.add_parser("disasm", help="disassemble a mission's routines (control flow, symbolic stack)")
    a.add_argument("mission", type=Path, nargs="?", help="MISSION.dte (loose) or resource.hog")
    a.add_argument("--member", default=None, help="the mission member of a .hog")
    a.add_argument("--raw", type=Path, default=None, help="one routine block as bytes (block + constants)")
    a.add_argument("--json", action="store_true", help="one JSON document, one object per instruction")
    a.set_defaults(func=_disasm)
    a = sub.add_parser("comms", help="the speech events of a mission (the spec's extraction recipe)")
    a.add_argument("mission", type=Path)
    a.add_argument("--member", default=None, help="the mission member of a .hog")
    a.add_argument("--speech", type=Path, default=None, help="msspeech.hog to check members against")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=_comms)
    a = sub.add_parser("hog", help="list (and --extract) a BIGF .hog archive")
    a.add_argument("file", type=Path)
    a.add_argument("--extract", type=Path, default=None, metavar="DIR", help="write members (expanded)")
    a.set_defaults(func=_hog)
    a = sub.add_parser("decode", help="decode a .ut line to a 22,050 Hz mono 16-bit WAV")
    a.add_argument("file", type=Path)
    a.add_argument("-o", "--output", type=Path, required=True)
    a.set_defaults(func=_decode)
    a = sub.add_parser("encode", help="encode a WAV to a .ut line (analysis by synthesis)")
    a.add_argument("file", type=Path)
    a.add_argument("--tag", default="CB00", choices=("CB00", "CB97"), help="container tag (default CB00)")
    a.add_argument("-o", "--output", type=Path, required=True)
    a.set_defaults(func=_encode)
