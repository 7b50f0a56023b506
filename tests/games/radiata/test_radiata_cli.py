"""``barkbus radiata dump``: the records, --packet, --json, mismatch reports."""

from __future__ import annotations

import argparse
import json

import pytest
from radiata_fixtures import SPEC_RECORDS, spec_file

from audio.core.errors import FormatError
from audio.games.radiata.cli import register
from audio.games.radiata.formats import rmf


def run(*argv):
    ap = argparse.ArgumentParser(prog="barkbus")
    register(ap.add_subparsers(dest="cmd", required=True))
    args = ap.parse_args(["radiata", *map(str, argv)])
    return args.func(args)


def test_dump_json_gives_exactly_the_issue_fields(tmp_path, capsys):
    p = tmp_path / "spec.rmf"
    p.write_bytes(spec_file())
    assert run("dump", p, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["records"] == SPEC_RECORDS and out["mismatches"] == [] and out["region"] == "EN"


def test_dump_text_and_packet_selection_and_mismatch_report(tmp_path, capsys):
    bad = rmf.write_packet(
        [12], rmf.sentence(48) + rmf.speaker(1) + rmf.text_speed(3.0) + rmf.encode_text("Hey")
    )
    p = tmp_path / "two.rmf"
    p.write_bytes(rmf.write_rmf([rmf.write_packet([12], rmf.build_message(1, "Ok.")), None, bad]))
    assert run("dump", p, "--packet", 2) == 0
    out = capsys.readouterr().out
    assert "1 absent" in out and '"Hey"' in out and '"Ok."' not in out
    assert "mismatch: packet 2 message 0: declares 48 glyphs, draws 3" in out
    with pytest.raises(FormatError, match="absent"):
        run("dump", p, "--packet", 1)
