"""The command line loads only what the chosen command needs: ``barkbus --help`` lists every
command from a light table (no codec, numba, NumPy or Dask imported), a subcommand's module is
imported only when that subcommand is on the line, and every subcommand's ``--help`` loads no
codec, numba, Dask or engine (its commands import them when they run). Counted in a fresh
interpreter (this test session has imported everything already), never timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from audio.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "numba", "dask", "distributed", "audio.codecs", "audio.containers", "audio.core.engine")


def _loaded_after(argv: list[str]) -> dict[str, bool]:
    """Which of HEAVY (and the batch module) a fresh interpreter holds after parsing ``argv``."""
    code = (
        "import json, sys\n"
        "from audio.cli import build_parser\n"
        f"p = build_parser({argv!r})\n"
        f"try:\n    p.parse_args({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps({{m: m in sys.modules for m in {[*HEAVY, 'audio.offline.batch.cli']!r}}}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_top_level_help_imports_no_codec_numba_numpy_or_dask():
    loaded = _loaded_after(["--help"])
    assert [m for m, yes in loaded.items() if yes] == []


def test_batch_help_imports_the_batch_module_but_not_dask_or_the_engine():
    loaded = _loaded_after(["batch", "--help"])
    assert loaded["audio.offline.batch.cli"]
    assert [m for m in HEAVY if loaded[m]] == []


def _subcommands(parser) -> dict[str, object]:
    (action,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return action


_COMMANDS = list(_subcommands(build_parser(None)).choices)


def test_every_command_is_covered():
    assert {"demo", "render", "live", "encode", "skate", "sylpheed", "starlancer", "radiata"} <= {*_COMMANDS}


@pytest.mark.parametrize("command", _COMMANDS)
def test_each_commands_help_imports_no_codec_numba_dask_or_engine(command):
    loaded = _loaded_after([command, "--help"])
    assert [m for m in HEAVY if loaded[m]] == []


def test_the_light_table_lists_the_same_commands_and_help_as_the_full_parser():
    full = _subcommands(build_parser(None))
    light = _subcommands(build_parser([]))
    as_dict = lambda a: {c.dest: c.help for c in a._choices_actions}  # noqa: E731
    assert as_dict(light) == as_dict(full)
    assert list(light.choices) == list(full.choices)


def test_a_chosen_subcommand_is_registered_in_full_and_parses_its_options(tmp_path):
    argv = ["batch", "plaza", "--seeds", "0:3", "-o", str(tmp_path), "--chunk", "7"]
    args = build_parser(["batch"]).parse_args(argv)
    assert (args.seeds, args.output, args.chunk) == ("0:3", tmp_path, 7)


@pytest.mark.parametrize("argv", [["--debug", "batch", "--help"], ["batch", "--debug", "--help"]])
def test_debug_anywhere_still_finds_the_subcommand(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0 and "--decisions-only" in capsys.readouterr().out


def test_an_unknown_command_is_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["nosuch"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "invalid choice: 'nosuch'" in err
