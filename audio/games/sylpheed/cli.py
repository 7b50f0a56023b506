"""``barkbus sylpheed ...``: inspect Project Sylpheed data (banks, tables, cue join)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from audio.core.errors import FormatError, InputError
from audio.core.schema import did_you_mean
from audio.games.sylpheed.chatter.rules import merge_phases
from audio.games.sylpheed.formats.pak import PakArchive
from audio.games.sylpheed.formats.presets import Crew, message_table_path, rule_table_path
from audio.games.sylpheed.formats.table import read_table

if TYPE_CHECKING:  # the commands import these when they run, so ``sylpheed --help`` loads no codec
    import numpy as np

    from audio.games.sylpheed.formats.install import SylpheedInstall

__all__ = ["register"]


def _root(value: str | None) -> Path:
    """``--root``: ``None`` or ``"demo"`` is the embedded demo install."""
    from audio.games.sylpheed.scenario import demo_root

    return demo_root() if value in (None, "demo") else Path(value)


def _install(args: argparse.Namespace) -> SylpheedInstall:
    from audio.games.sylpheed.formats.install import SylpheedInstall

    inst = SylpheedInstall(_root(args.root), getattr(args, "lang", "eng"))
    inst.paks()  # InputError when root is not an install
    return inst


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (to name a member of an install, add --root)") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def _pak_of(path: Path) -> Path | None:
    """The ``X.pak`` of a pak file or of one of its parts ``X.p00``..., if beside it."""
    suffix = path.suffix.lower()
    if suffix == ".pak":
        return path
    if len(suffix) == 4 and suffix[:2] == ".p" and suffix[2:].isdigit():
        for cand in (path.with_suffix(".pak"), path.with_suffix(".PAK")):
            if cand.is_file():
                return cand
    return None


def _probe_archive(arc: PakArchive, names: dict[int, str], label: str) -> int:
    """Probe every entry of an archive: one line each; 0 if every entry holds decodable audio."""
    from audio.games.sylpheed.formats.slb import probe_slb

    ok = 0
    print(f"{label}: IPFB archive, {len(arc.entries)} entries; probing each entry")
    for e in sorted(arc.entries, key=lambda e: (e.id not in names, names.get(e.id, "").lower(), e.id)):
        name = names.get(e.id, f"0x{e.id:08X}")
        try:
            rep = probe_slb(arc.read(e.id), f"{label}+{name}")
        except FormatError as exc:
            print(f"  {name}: {exc}")
            continue
        ok += rep.recognised
        print(f"  {name}: {rep.summary()}")
    print(f"{ok} of {len(arc.entries)} entries hold decodable audio")
    return 0 if ok == len(arc.entries) else 1


def _member(args: argparse.Namespace) -> tuple[bytes, str]:
    """The bytes and display name of ``args.file``: an install member with ``--root``, else a file."""
    if args.root is None:
        path = Path(args.file)
        return _read_file(path), str(path)
    inst = _install(args)
    pak, inner = inst.find_member(args.file)
    return inst.pak(pak).read(inner), f"{pak}+{inner}"


def _names_for(pak: Path) -> dict[int, str]:
    """Entry names of an archive on disk, from its install's tables when it sits in ``ROOT/dat``."""
    from audio.games.sylpheed.formats.install import SylpheedInstall

    if pak.parent.name.lower() != "dat":
        return {}
    try:
        inst = SylpheedInstall(pak.parent.parent)
        return inst.member_names().get(f"dat\\{pak.name}".lower(), {})
    except (FormatError, InputError):
        return {}


def _slb_probe(args: argparse.Namespace) -> int:
    from audio.games.sylpheed.formats.slb import probe_slb

    if args.root is None and (pak := _pak_of(Path(args.file))) is not None:
        try:
            arc = PakArchive.open(pak)
        except FormatError:
            arc = None  # not an archive after all: probe the bytes
        if arc is not None:
            return _probe_archive(arc, _names_for(pak), str(pak))
    if args.root is not None:
        inst = _install(args)
        if (pak_name := _match_pak(inst.paks(), args.file)) is not None:
            return _probe_archive(inst.pak(pak_name), inst.member_names().get(pak_name.lower(), {}), pak_name)
    data, label = _member(args)
    rep = probe_slb(data, label)
    print(rep.text())
    return 0 if rep.recognised else 1


def _slb_decode(args: argparse.Namespace) -> int:
    import numpy as np

    from audio.core.outputs import check_outputs, is_stdio, write_audio
    from audio.games.sylpheed.formats.slb import decode_slb

    check_outputs({"-o": (args.output, "audio")})
    data, label = _member(args)
    pcm, sample_rate = decode_slb(data, label, args.entry, raw_sample_rate=args.sample_rate)
    write_audio(args.output, np.asarray(pcm, np.float32), sample_rate)
    print(
        f"{args.output}: {pcm.shape[0]} samples x {pcm.shape[1]} ch at {sample_rate} Hz "
        f"({pcm.shape[0] / sample_rate:.3f} s)",
        file=sys.stderr if is_stdio(args.output) else sys.stdout,
    )
    return 0


def _match_pak(paks: list[str], want: str) -> str | None:
    """The archive ``want`` names (``sound``, ``sound.pak``, ``dat\\sound.pak``; any case), or None."""
    key = want.replace("/", "\\").lower().removeprefix("dat\\").removesuffix(".pak")
    return next((p for p in paks if p.lower().removeprefix("dat\\").removesuffix(".pak") == key), None)


def _suggest(name: str, known: list[str]) -> str:
    """:func:`did_you_mean`, with install paths' backslashes shown once (not as a repr)."""
    return did_you_mean(name, known).replace("\\\\", "\\")


def _ls(args: argparse.Namespace) -> int:
    """List the members of the install's archives (all, or the ones named)."""
    inst = _install(args)
    paks = inst.paks()
    chosen = paks
    if args.pak:
        chosen = []
        for want in args.pak:
            pak = _match_pak(paks, want)
            if pak is None:
                short = [p.removeprefix("dat\\").removesuffix(".pak") for p in paks]
                raise InputError(
                    f"{inst.root}: no archive '{want}' (have {', '.join(paks)})" + _suggest(want, short)
                )
            chosen.append(pak)
    names = inst.member_names()
    for pak in chosen:
        _ls_pak(inst.pak(pak), pak, names.get(pak.lower(), {}))
    return 0


def _ls_pak(arc: PakArchive, pak: str, names: dict[int, str]) -> None:
    print(
        f"{pak}: {len(arc.entries)} entries ({sum(e.id in names for e in arc.entries)} named by the "
        f"install's tables), {len(arc.parts)} part file(s)"
    )
    for e in sorted(arc.entries, key=lambda e: (e.id not in names, names.get(e.id, "").lower(), e.id)):
        head = arc.parts[e.part][e.offset : e.offset + 6] if e.part < len(arc.parts) else b""
        packed = (
            f"Z1 -> {int.from_bytes(head[2:6], 'big'):8d}"
            if head[:2] == b"Z1" and len(head) == 6
            else "raw" + " " * 12
        )
        print(f"  0x{e.id:08X}  p{e.part:02d}+0x{e.offset:07X}  {e.size:8d} {packed}  {names.get(e.id, '?')}")


def _tables(args: argparse.Namespace) -> int:
    """Each stage's UnitGroup and crews' rule tables, with their self-checks (1 if any fails)."""
    inst = _install(args)
    ok = True
    for st in _chosen_stages(inst, args.stage):
        print(f"== {st}")
        ok &= _report_unit_group(inst, st)
        for crew in inst.unit_message_set(st).crews:
            ok &= _report_crew(inst, crew, args.verbose)
    return 0 if ok else 1


def _chosen_stages(inst: SylpheedInstall, stage: str | None) -> list[str]:
    from audio.games.sylpheed.formats.install import stage_tag

    stages = inst.stages()
    if not stage:
        return list(stages)
    try:
        want = stage_tag(stage)
    except ValueError as exc:
        raise InputError(f"--stage: {exc}") from None
    if want not in stages:
        raise InputError(f"{inst.root}: no stage {want} (have {', '.join(stages) or 'none'})")
    return [want]


def _report_unit_group(inst: SylpheedInstall, st: str) -> bool:
    """Print stage ``st``'s UnitGroup and its self-checks; True if they pass."""
    try:
        ug = inst.unit_group(st)
    except FormatError as exc:
        print(f"  UnitGroup: {exc}")
        return True
    ugrep = read_table(inst.pak(inst.game_pak).read(f"stage\\UnitGroup_{st}.tbl")).hash_report()
    print(
        f"  UnitGroup tag_hash: {ugrep.named_fields - len(ugrep.field_mismatches)}/"
        f"{ugrep.named_fields} named fields agree"
    )
    wf, rf = ug.width_failures(), ug.roster_failures()
    print(f"  UnitGroup: {len(ug.squadrons)} squadrons, roster {ug.roster_name!r} ({len(ug.roster)} entries)")
    print(
        f"  self-check len(fields) == Count*4+5: {len(ug.squadrons) - len(wf)}/{len(ug.squadrons)}"
        + (f" FAIL {wf}" if wf else "")
    )
    print(
        f"  self-check roster agreement: {len(ug.squadrons) - len(rf)}/{len(ug.squadrons)}"
        + (f" FAIL {rf}" if rf else "")
    )
    for s in ug.squadrons:
        print(
            f"    {s.id} {s.side} Count={s.count} {s.formation} {s.ai} "
            f"DisableInterval={'Yes' if s.disable_interval else 'No'}"
        )
        for m in s.members:
            print(f"      unit={m.unit} msg={m.message_set} n={m.n} id={m.identity}")
    return bool(ugrep.fields_ok and not wf and not rf)


def _report_crew(inst: SylpheedInstall, crew: Crew, verbose: bool) -> bool:
    """Print one crew's merged rule tables and their tag-hash checks; True if they pass."""
    tabs = [inst.rule_table(n) for n in crew.tables]
    res = merge_phases(tabs)
    pair_bad = [f"{t.name}:{e}" for t in tabs for e in t.pair_failures()]
    ok = not pair_bad
    print(f"  crew {crew.name} CrewCount={crew.crew_count} phases={list(crew.phases)}")
    if tabs:
        print(
            f"    merged {len(res.rules)} rules, {len(res.collisions)} collisions, "
            f"flag={'set' if res.flag else 'CLEARED'}"
            + (f", mismatches {[c.event for c in res.mismatches]}" if res.mismatches else "")
        )
        who = list(dict.fromkeys(s for t in tabs for s in t.speakers))
        print(f"    speakers {who}; MessageCount*2 == positional: " + ("ok" if ok else f"FAIL {pair_bad}"))
    arc = inst.pak(inst.game_pak)
    for n in dict.fromkeys(crew.tables):
        for inner in (rule_table_path(n), message_table_path(n)):
            if inner not in arc:
                continue
            rep = read_table(arc.read(inner), inner).hash_report()
            ok &= rep.fields_ok
            if not rep.fields_ok or verbose:
                print(
                    f"    tag_hash {inner}: {rep.named_fields - len(rep.field_mismatches)}/"
                    f"{rep.named_fields} named fields agree"
                    + "".join(
                        f"; {m.record}.{m.field} stored 0x{m.stored:08X} computed 0x{m.computed:08X}"
                        for m in rep.field_mismatches[:5]
                    )
                )
    if verbose:
        for r in res.rules.values():
            print(
                f"      {r.event}: P={r.probability}% pri={r.priority} pat={r.pattern} "
                f"int={r.interval}f fl={r.fluctuation}f eff={r.effective_time}f "
                f"yes=0x{r.yes_mask:X} {list(r.messages)}"
            )
    return bool(ok)


def _cues(args: argparse.Namespace) -> int:
    inst = _install(args)
    ids = [
        m for name in inst.reachable_rule_tables() for e in inst.rule_table(name).events for m, _ in e.lines
    ]
    rep = inst.cues(ids)
    print(rep.summary())
    for r in rep.unresolved():
        print(f"  {r.message_id} -> {r.cue}: {r.problem}")
    if args.verbose:
        for r in rep.results.values():
            if r.ok:
                print(f"  {r.message_id} -> {r.cue} id {r.sound_id} -> {r.path} (0x{r.bank_id:08X})")
    return 0


_ROOT_HELP = 'install folder holding dat/, or "demo" (default: the embedded demo install)'


def _new_line(path: Path, channels: int, sample_rate: int) -> np.ndarray:
    """The replacement line read with soundfile, mixed to ``channels`` and resampled to
    ``sample_rate`` Hz: float32 ``(samples, channels)``."""
    from math import gcd

    import numpy as np
    import soundfile as sf
    from scipy.signal import resample_poly

    try:
        x, file_sample_rate = sf.read(path, dtype="float64", always_2d=True)
    except sf.LibsndfileError as exc:
        raise InputError(f"{path}: not an audio file soundfile can read ({exc})") from None
    if x.shape[1] != channels:
        x = np.repeat(x.mean(axis=1, keepdims=True), channels, axis=1)
    if int(file_sample_rate) != sample_rate:
        g = gcd(int(file_sample_rate), sample_rate)
        x = resample_poly(x, sample_rate // g, int(file_sample_rate) // g, axis=0)
    return x.astype(np.float32)


def _slb_replace(args: argparse.Namespace) -> int:
    from audio.containers import xwb
    from audio.core.errors import OutputError
    from audio.games.sylpheed.formats.pak import rewrite_pak, write_pak_files
    from audio.games.sylpheed.formats.slb import replace_slb_entry

    arc = inner = None
    if args.root is None:
        if args.output.resolve() == args.file.resolve():
            raise OutputError(f"{args.output}: is the input .slb; give a new file name")
        data, label = _read_file(args.file), str(args.file)
    else:
        if args.output.suffix.lower() != ".pak":
            raise OutputError(f"{args.output}: a member of an archive is written into a new .pak; name one")
        inst = _install(args)
        pak, inner = inst.find_member(str(args.file))
        arc, label = inst.pak(pak), f"{pak}+{inner}"
        data = arc.read(inner)
    bank = xwb.read_wavebank(data, label)
    if not 0 <= args.entry < len(bank.entries):
        raise InputError(f"{label}: has entries 0..{len(bank.entries) - 1}, no entry {args.entry}")
    e = bank.entries[args.entry]
    x = _new_line(args.audio, e.channels, e.sample_rate)
    out = replace_slb_entry(data, args.entry, x, path=label, bitrate=args.bitrate, codec=args.codec)
    seconds = f"{x.shape[0] / e.sample_rate:.2f} s, {'XMA2' if args.codec == xwb.CODEC_XMA2 else 'PCM16'}"
    if arc is None:
        tmp = args.output.with_name(args.output.name + ".partial")
        try:
            tmp.write_bytes(out)
            tmp.replace(args.output)
        finally:
            tmp.unlink(missing_ok=True)
        print(f"{args.output}: entry {args.entry} replaced ({seconds}), {len(out)} bytes")
        return 0
    assert inner is not None
    toc, parts = rewrite_pak(arc, {inner: out})
    try:
        files = write_pak_files(args.output, toc, parts)
    except FileExistsError as exc:
        raise OutputError(str(exc)) from None
    print(
        f"{args.output}: {label} entry {args.entry} replaced ({seconds}); the other "
        f"{len(arc.entries) - 1} members copied as stored; {sum(f.stat().st_size for f in files)} bytes "
        f"in {len(files)} files"
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sylpheed`` command group."""
    p = subparsers.add_parser(
        "sylpheed",
        help="Project Sylpheed data: paks, .slb banks, tables, cue join",
        description="Inspect Project Sylpheed chatter data in the game's own layout "
        "(the embedded demo install unless --root is given).",
    )
    sub = p.add_subparsers(dest="sylpheed_cmd", required=True, metavar="COMMAND")
    a = sub.add_parser(
        "ls",
        help="list the members of the install's .pak archives",
        description="List every member of the install's archives (or of the ones named): "
        "id, part and offset, stored size, Z1 compression, and the inner name "
        "where the install's own tables give it ('?' otherwise).",
    )
    a.add_argument("pak", nargs="*", help="archives to list (sound, dat\\sound.pak...; default: all)")
    a.add_argument("--root", default=None, help=_ROOT_HELP)
    a.add_argument("--lang", default="eng", choices=("eng", "jpn"), help="voice language (default eng)")
    a.set_defaults(func=_ls)
    member = (
        "FILE: a file on disk (a .pak or .p00 probes every entry), or with --root an install member "
        "such as 'eng\\Voice\\VOICE_ADAN_010.slb' or 'dat\\sound.pak+eng\\Voice\\...'"
    )
    a = sub.add_parser(
        "slb-probe",
        help="say what an .slb (or any bank, or every entry of a pak) holds",
        description="Probe an .slb: XACT wave bank at 0 or embedded, RIFF/WAVE, raw XMA packets. " + member,
    )
    a.add_argument("file", help="file, or install member with --root")
    a.add_argument("--root", default=None, help='install folder or "demo": FILE names a member of it')
    a.set_defaults(func=_slb_probe)
    a = sub.add_parser(
        "slb-decode",
        help="decode one entry of an .slb / .xwb / RIFF XMA to WAV",
        description="Decode an entry through the codec layer to a 16-bit WAV. " + member,
    )
    a.add_argument("file", help="file, or install member with --root")
    a.add_argument("--root", default=None, help='install folder or "demo": FILE names a member of it')
    a.add_argument("--entry", type=int, default=0, help="wave bank entry index (default 0)")
    a.add_argument(
        "--rate",
        dest="sample_rate",
        metavar="HZ",
        type=int,
        default=None,
        help="sample rate (Hz) for raw XMA packets",
    )
    a.add_argument("-o", "--output", type=Path, required=True, help="output .wav")
    a.set_defaults(func=_slb_decode)
    a = sub.add_parser(
        "slb-replace",
        help="replace one wave bank entry of an .slb (loose, or inside a .pak) with a new line (XMA2)",
        description="Encode AUDIO as XMA2 at the entry's sample rate and channel count (resampled and mixed "
        "as needed) and write a new .slb with every other wave bank entry kept as stored. With "
        "--root, FILE is a member of the install's archives (sound.pak+eng\\etc\\VOICE_A_010.slb "
        "or just the inner path) and OUTPUT a new .pak (with its .p00... parts) holding every other "
        "member byte for byte as stored. A bank of version 38 or older (XMA there is XMA1, which "
        "barkbus does not encode) takes the line as --codec pcm. Only an .slb that is a wave bank "
        "from offset 0 can be "
        "rewritten. Console acceptance of barkbus's XMA2 is not verified.",
    )
    a.add_argument("file", type=Path, help="the .slb: a loose file, or with --root an install member")
    a.add_argument("entry", type=int, help="wave bank entry index")
    a.add_argument("audio", type=Path, help="the new line (WAV, FLAC, ...)")
    a.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        help="new .slb (not the input); with --root a new .pak (its parts are written beside it)",
    )
    a.add_argument("--bitrate", type=float, default=64.0, help="XMA2 kbit/s per channel (default 64)")
    a.add_argument(
        "--codec",
        default="xma2",
        choices=("xma2", "pcm"),
        help="the new entry's codec: xma2 (default; banks of version 39 and later, where XMA is "
        "XMA2) or pcm (16-bit; any version, e.g. the XMA1-era banks of version 37/38)",
    )
    a.add_argument("--root", default=None, help='install folder holding dat/, or "demo" (members of a .pak)')
    a.set_defaults(func=_slb_replace)
    for name, fn, helptext in (
        ("tables", _tables, "dump rule tables, the squadron roster and self-checks"),
        ("cues", _cues, "the message id -> cue -> bank join with resolution counts"),
    ):
        a = sub.add_parser(name, help=helptext, description=helptext)
        a.add_argument("--root", default=None, help=_ROOT_HELP)
        a.add_argument("--lang", default="eng", choices=("eng", "jpn"), help="voice language (default eng)")
        a.add_argument("-v", "--verbose", action="store_true", help="list every rule / resolved cue")
        if name == "tables":
            a.add_argument("--stage", default=None, help="one stage (S02); default every stage found")
        a.set_defaults(func=fn)
