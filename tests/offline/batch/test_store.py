"""The Parquet store: atomic files, resume bookkeeping, one copy per run."""

from __future__ import annotations

import pytest

from audio.core.errors import BarkbusError
from audio.offline.batch.store import BatchStore, table_from_rows


def _rows(key: str, seeds: list[int], tag: str = "x") -> list[dict]:
    out = []
    for s in seeds:
        out.append({"scenario": key, "seed": s, "kind": "run", "status": "ok", "mode": "decisions"})
        out.append(
            {"scenario": key, "seed": s, "kind": "decision", "seq": 0, "system": "sys", "outcome": tag}
        )
    return out


def test_written_tasks_are_the_finished_runs_and_temp_files_are_ignored(tmp_path):
    store = BatchStore(tmp_path)
    store.open({"a": "/a.toml"}, "decisions", resume=False)
    store.write("a", [0, 1], table_from_rows(_rows("a", [0, 1])))
    (store.runs / ".tmp-cut-short.parquet").write_bytes(b"PAR1 half a file")
    assert store.finished() == {("a", 0), ("a", 1)}
    assert [f.name for f in store.files()] == ["a-00000000-00000001.parquet"]
    store.open({"a": "/a.toml"}, "decisions", resume=True)
    assert not list(store.runs.glob(".tmp-*"))


def test_a_run_stored_twice_is_loaded_once_from_the_first_file(tmp_path):
    store = BatchStore(tmp_path)
    store.open({"a": "/a.toml"}, "decisions", resume=False)
    store.write("a", [0, 1], table_from_rows(_rows("a", [0, 1], "first")))
    store.write("a", [1, 2], table_from_rows(_rows("a", [1, 2], "second")))
    t = store.load().to_pandas()
    runs = t[t["kind"] == "run"]
    assert sorted(runs["seed"]) == [0, 1, 2]
    dec = t[t["kind"] == "decision"].set_index("seed")["outcome"].to_dict()
    assert dec == {0: "first", 1: "first", 2: "second"}


def test_a_used_directory_needs_resume_and_the_same_mode_and_paths(tmp_path):
    store = BatchStore(tmp_path)
    store.open({"a": "/a.toml"}, "decisions", resume=False)
    store.write("a", [0], table_from_rows(_rows("a", [0])))
    with pytest.raises(BarkbusError, match="--resume"):
        store.open({"a": "/a.toml"}, "decisions", resume=False)
    with pytest.raises(BarkbusError, match="decisions batch"):
        store.open({"a": "/a.toml"}, "full", resume=True)
    with pytest.raises(BarkbusError, match="was /a.toml"):
        store.open({"a": "/elsewhere/a.toml"}, "decisions", resume=True)


def test_a_damaged_store_file_is_one_format_error(tmp_path):
    from audio.core.errors import FormatError

    store = BatchStore(tmp_path)
    store.open({"a": "/a.toml"}, "decisions", resume=False)
    (store.runs / "a-00000000-00000000.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(FormatError, match="delete it"):
        store.finished()
