"""``barkbus sylpheed ...``: inspect Project Sylpheed data (banks, tables, cue join)."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from audio.core.errors import FormatError
from audio.games.sylpheed.formats.install import SylpheedInstall
from audio.games.sylpheed.chatter.rules import merge_phases
from audio.games.sylpheed.formats.presets import message_table_path, rule_table_path
from audio.games.sylpheed.formats.slb import decode_slb, probe_slb
from audio.games.sylpheed.formats.table import read_table

__all__ = ["register"]


def _slb_probe(args: argparse.Namespace) -> int:
    data = Path(args.file).read_bytes()
    rep = probe_slb(data, str(args.file))
    print(rep.text())
    return 0 if rep.recognised else 1


def _slb_decode(args: argparse.Namespace) -> int:
    import soundfile as sf

    data = Path(args.file).read_bytes()
    pcm, rate = decode_slb(data, str(args.file), args.entry, raw_rate=args.rate)
    sf.write(args.output, np.clip(pcm, -1.0, 1.0), rate, subtype="PCM_16")
    print(f"{args.output}: {pcm.shape[0]} samples x {pcm.shape[1]} ch at {rate} Hz "
          f"({pcm.shape[0] / rate:.3f} s)")
    return 0


def _tables(args: argparse.Namespace) -> int:
    inst = SylpheedInstall(args.root, args.lang)
    ok = True
    stages = [args.stage] if args.stage else inst.stages()
    for st in stages:
        print(f"== {st}")
        try:
            ug = inst.unit_group(st)
        except FormatError as exc:
            print(f"  UnitGroup: {exc}")
            ug = None
        if ug is not None:
            ugrep = read_table(inst.pak(inst.game_pak).read(f"stage\\UnitGroup_{st}.tbl")).hash_report()
            print(f"  UnitGroup tag_hash: {ugrep.named_fields - len(ugrep.field_mismatches)}/"
                  f"{ugrep.named_fields} named fields agree")
            ok &= ugrep.fields_ok
            wf, rf = ug.width_failures(), ug.roster_failures()
            ok &= not wf and not rf
            print(f"  UnitGroup: {len(ug.squadrons)} squadrons, roster {ug.roster_name!r} "
                  f"({len(ug.roster)} entries)")
            print(f"  self-check len(fields) == Count*4+5: {len(ug.squadrons) - len(wf)}/{len(ug.squadrons)}"
                  + (f" FAIL {wf}" if wf else ""))
            print(f"  self-check roster agreement: {len(ug.squadrons) - len(rf)}/{len(ug.squadrons)}"
                  + (f" FAIL {rf}" if rf else ""))
            for s in ug.squadrons:
                print(f"    {s.id} {s.side} Count={s.count} {s.formation} {s.ai} "
                      f"DisableInterval={'Yes' if s.disable_interval else 'No'}")
                for m in s.members:
                    print(f"      unit={m.unit} msg={m.message_set} n={m.n} id={m.identity}")
        ums = inst.unit_message_set(st)
        for crew in ums.crews:
            tabs = [inst.rule_table(n) for n in crew.tables]
            res = merge_phases(tabs)
            pair_bad = [f"{t.name}:{e}" for t in tabs for e in t.pair_failures()]
            ok &= not pair_bad
            print(f"  crew {crew.name} CrewCount={crew.crew_count} phases={list(crew.phases)}")
            if tabs:
                print(f"    merged {len(res.rules)} rules, {len(res.collisions)} collisions, "
                      f"flag={'set' if res.flag else 'CLEARED'}"
                      + (f", mismatches {[c.event for c in res.mismatches]}" if res.mismatches else ""))
                who = list(dict.fromkeys(s for t in tabs for s in t.speakers))
                print(f"    speakers {who}; MessageCount*2 == positional: "
                      + ("ok" if not pair_bad else f"FAIL {pair_bad}"))
            for n in dict.fromkeys(crew.tables):
                for inner in (rule_table_path(n), message_table_path(n)):
                    arc = inst.pak(inst.game_pak)
                    if inner in arc:
                        rep = read_table(arc.read(inner), inner).hash_report()
                        ok &= rep.fields_ok
                        if not rep.fields_ok or args.verbose:
                            print(f"    tag_hash {inner}: {rep.named_fields - len(rep.field_mismatches)}/"
                                  f"{rep.named_fields} named fields agree"
                                  + "".join(f"; {m.record}.{m.field} stored 0x{m.stored:08X} computed "
                                            f"0x{m.computed:08X}" for m in rep.field_mismatches[:5]))
            if args.verbose:
                for r in res.rules.values():
                    print(f"      {r.event}: P={r.probability}% pri={r.priority} pat={r.pattern} "
                          f"int={r.interval}f fl={r.fluctuation}f eff={r.effective_time}f "
                          f"yes=0x{r.yes_mask:X} {list(r.messages)}")
    return 0 if ok else 1


def _cues(args: argparse.Namespace) -> int:
    inst = SylpheedInstall(args.root, args.lang)
    ids = [m for name in inst.reachable_rule_tables() for e in inst.rule_table(name).events
           for m, _ in e.lines]
    rep = inst.cues(ids)
    print(rep.summary())
    for r in rep.unresolved():
        print(f"  {r.message_id} -> {r.cue}: {r.problem}")
    if args.verbose:
        for r in rep.results.values():
            if r.ok:
                print(f"  {r.message_id} -> {r.cue} id {r.sound_id} -> {r.path} (0x{r.bank_id:08X})")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sylpheed`` command group."""
    p = subparsers.add_parser("sylpheed", help="Project Sylpheed data: .slb banks, tables, cue join",
                              description="Inspect Project Sylpheed chatter data in the game's own layout.")
    sub = p.add_subparsers(dest="sylpheed_cmd", required=True)
    a = sub.add_parser("slb-probe", help="say what an .slb (or any bank) holds",
                       description="Probe an .slb: XACT wave bank at 0 or embedded, RIFF/WAVE, "
                                   "raw XMA packets.")
    a.add_argument("file", type=Path)
    a.set_defaults(func=_slb_probe)
    a = sub.add_parser("slb-decode", help="decode one entry of an .slb / .xwb / RIFF XMA to WAV",
                       description="Decode an entry through the codec layer to a 16-bit WAV.")
    a.add_argument("file", type=Path)
    a.add_argument("--entry", type=int, default=0, help="wave bank entry index (default 0)")
    a.add_argument("--rate", type=int, default=None, help="sample rate (Hz) for raw XMA packets")
    a.add_argument("-o", "--output", type=Path, required=True, help="output .wav")
    a.set_defaults(func=_slb_decode)
    for name, fn, helptext in (("tables", _tables, "dump rule tables, the squadron roster and self-checks"),
                               ("cues", _cues, "the message id -> cue -> bank join with resolution counts")):
        a = sub.add_parser(name, help=helptext, description=helptext)
        a.add_argument("--root", type=Path, required=True, help="install folder holding dat/")
        a.add_argument("--lang", default="eng", help="voice language: eng | jpn (default eng)")
        a.add_argument("-v", "--verbose", action="store_true", help="list every rule / resolved cue")
        if name == "tables":
            a.add_argument("--stage", default=None, help="one stage (S02); default every stage found")
        a.set_defaults(func=fn)
