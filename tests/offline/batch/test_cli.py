"""``barkbus batch``: seeds parsing, scenario names, report command, the full command on a LocalCluster."""

from __future__ import annotations

import pytest
from fuzz_budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from audio.cli import main
from audio.core.errors import BarkbusError
from audio.offline.batch.cli import parse_seeds, resolve_scenarios


def test_seeds_are_a_half_open_range_or_one_seed():
    assert parse_seeds("3:6") == [3, 4, 5]
    assert parse_seeds("7") == [7]
    for bad in ("6:3", "-1:2", "a:b", "", "1:2:3"):
        with pytest.raises(BarkbusError, match="--seeds"):
            parse_seeds(bad)


@settings(max_examples=examples(200))
@given(st.text(max_size=12))
def test_any_seeds_text_parses_or_gives_one_barkbus_error(text):
    try:
        seeds = parse_seeds(text)
    except BarkbusError:
        return
    assert seeds and min(seeds) >= 0


def test_demo_names_resolve_to_their_scenarios_and_missing_files_are_one_error(tmp_path):
    got = resolve_scenarios(["skate", "sylpheed"])
    assert sorted(got) == ["dogfight", "plaza"]
    with pytest.raises(BarkbusError, match="no scenario file"):
        resolve_scenarios([str(tmp_path / "nothing.toml")])


def test_report_of_a_directory_without_a_batch_is_one_error_line(tmp_path, capsys):
    assert main(["batch", "report", str(tmp_path)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds no batch" in err[0]


@pytest.mark.parametrize(
    "args",
    [
        ["batch", "sylpheed", "-o", "runs"],  # no --seeds
        ["batch", "sylpheed", "--seeds", "0:3"],  # no -o
        ["batch", "sylpheed", "--seeds", "0:3", "-o", "runs", "--workers", "2", "--scheduler", "tcp://h:1"],
        ["batch", "sylpheed", "--seeds", "0:3", "-o", "runs", "--shared-store"],  # no --scheduler
        ["batch", "report"],  # no DIR
    ],
    ids=["no-seeds", "no-output", "workers-and-scheduler", "shared-store-alone", "report-without-dir"],
)
def test_a_batch_command_missing_or_mixing_options_is_one_error_line_with_exit_status_2(
    args, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # "runs" is relative: nothing may appear there
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("barkbus: error:")
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_batch_command_runs_resumes_and_reports(tmp_path, capsys):
    out = tmp_path / "runs"
    args = [
        "batch",
        "sylpheed",
        "--seeds",
        "0:3",
        "-o",
        str(out),
        "--workers",
        "1",
        "--decisions-only",
        "--quiet",
    ]
    assert main(args) == 0
    assert "3 runs ok, 0 failed" in capsys.readouterr().out
    assert main([*args[:3], "0:4", *args[4:], "--resume"]) == 0
    text = capsys.readouterr()
    assert "1 runs ok, 0 failed, 3 already recorded" in text.out and "dask dashboard: " in text.err
    assert main(["batch", "report", str(out)]) == 0
    assert (out / "report" / "index.html").is_file()
