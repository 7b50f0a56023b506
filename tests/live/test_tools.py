"""The command-line tools: help texts and a short benchmark run without a device."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("tool", ["tools/osc_client.py", "tools/bench_live.py"])
def test_tools_explain_themselves(tool):
    r = subprocess.run(
        check=False,
        args=[sys.executable, tool, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and "usage:" in r.stdout


def test_bench_measures_event_to_audio_latency_and_callback_times(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run(
        [
            sys.executable,
            "tools/bench_live.py",
            "--no-audio",
            "--seconds",
            "2",
            "--voices",
            "4",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    (res,) = json.loads(out.read_text())
    assert res["voices"] == 4 and res["messages_sent"] == 200 and res["osc_dropped"] == 0
    assert res["probes"] >= 5
    # a probe can't sound before the blocks already rendered ahead have played, nor much later
    assert 256 / 48 < res["latency_p50_ms"] <= res["latency_max_ms"] < 100
    assert res["callbacks"] == pytest.approx(res["expected_callbacks"], rel=0.05)
    assert res["voices_playing_at_end"] >= 4


def test_live_command_registers_into_a_cli_parser():
    import argparse

    from audio.port.live import cmd_live, register

    parser = argparse.ArgumentParser(prog="barkbus")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["live", "--no-audio", "--seconds", "1", "--osc", "--osc-port", "0"])
    assert args.func is cmd_live and args.no_audio and args.osc_port == 0 and args.game == "tone"


@pytest.mark.slow
def test_bench_compares_interleaved_variants_side_by_side(tmp_path):
    out = tmp_path / "bench.json"
    args = ["--no-audio", "--seconds", "4", "--voices", "4", "--compare", "off,reader", "--repeats", "2"]
    r = subprocess.run(
        [sys.executable, "tools/bench_live.py", *args, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    runs = json.loads(out.read_text())
    assert [x["variant"] for x in runs] == ["off", "reader", "off", "reader"]  # interleaved
    for x in runs[1::2]:  # the page's server process served a client reading every update
        assert x["page_connected"] and 1 <= x["reader_messages"] <= x["page_updates_sent"]
    assert all(x["page_updates_sent"] == 0 for x in runs[0::2])
    table = r.stdout
    assert "callback_p99_us" in table and "underruns" in table and " x" in table  # ratios printed
