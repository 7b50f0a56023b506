"""Inside the memo (a batch worker, the renders of a process) a graph file is parsed once, and
again when it, or the base graph an alias (``same_as``) copies, changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from audio.core import memo
from audio.dsp.graph import graphs_dir, load_graph


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # a new signature


def test_a_graph_and_an_alias_are_read_again_when_their_files_change(tmp_path, monkeypatch):
    folder = tmp_path / "graphs"
    shutil.copytree(graphs_dir(), folder)
    monkeypatch.setenv("BARKBUS_GRAPHS", str(folder))
    memo.clear()
    with memo.enabled():
        base = load_graph("skate_stream_voice")
        alias = load_graph("play_voice")
        assert load_graph("skate_stream_voice") is base and load_graph("play_voice") is alias  # kept
        assert base.node("Rsp0").params["pitch"] == alias.node("Rsp0").params["pitch"] == 4096.0
        _edit(folder / "skate_stream_voice.toml", "pitch = 4096.0", "pitch = 2048.0")
        assert load_graph("skate_stream_voice").node("Rsp0").params["pitch"] == 2048.0
        assert load_graph("play_voice").node("Rsp0").params["pitch"] == 2048.0  # its base changed
        _edit(folder / "play_voice.toml", 'doc = "Generic voice', 'doc = "Edited voice')
        assert load_graph("play_voice").doc.startswith("Edited voice")
    memo.clear()
