"""A batch worker's memo (installs, graphs, scenarios, decoded takes kept across runs) changes
no sample: a full run whose loads all come from the memo, after other seeds filled it, is
identical to the same seed run with nothing kept."""

from __future__ import annotations

import numpy as np
import pytest

from audio.core import memo
from audio.offline.batch.runner import simulate
from audio.offline.scenario import demo_scenario


@pytest.mark.parametrize("demo", ["skate", "sylpheed", "radiata"])
def test_a_full_run_from_a_warm_memo_gives_the_same_samples_as_a_cold_one(demo):
    path = str(demo_scenario(demo))
    cold = simulate(path, 5, decisions_only=False)
    memo.clear()
    with memo.enabled():
        simulate(path, 4, decisions_only=True)  # lengths and loads of another seed first
        simulate(path, 6, decisions_only=False)
        hits = memo.stats()["hits"]
        warm = simulate(path, 5, decisions_only=False)
        assert memo.stats()["hits"] > hits  # the run really read the memo
    memo.clear()
    assert cold.audio is not None and warm.audio is not None
    assert np.array_equal(cold.audio, warm.audio)
    assert warm.decisions == cold.decisions


def test_outside_the_memo_every_load_is_fresh():
    calls = []
    assert not memo.active()
    for _ in range(2):
        memo.memo(("test.fresh",), lambda: calls.append(1) or len(calls))
    assert calls == [1, 1]


def test_inside_the_memo_a_value_is_built_once_and_a_failed_build_is_not_kept():
    calls = []

    def fail() -> int:
        calls.append("fail")
        raise OSError("unreadable")

    memo.clear()
    with memo.enabled():
        a = memo.memo(("test.once",), lambda: calls.append("ok") or object())
        assert memo.memo(("test.once",), lambda: calls.append("again") or object()) is a
        for _ in range(2):
            with pytest.raises(OSError):
                memo.memo(("test.fail",), fail)
    memo.clear()
    assert calls == ["ok", "fail", "fail"]


def test_the_memo_drops_the_least_recently_used_arrays_beyond_its_budget():
    memo.clear()
    with memo.enabled(budget=3000):
        memo.memo(("a",), lambda: np.zeros(250, np.float32))  # 1000 bytes each
        memo.memo(("b",), lambda: np.zeros(250, np.float32))
        memo.memo(("a",), lambda: None)  # a used again: b is now the oldest
        memo.memo(("c",), lambda: np.zeros(500, np.float32))  # 2000 bytes: b must go
        kept = {k: memo.memo((k,), lambda: "rebuilt") for k in "abc"}
    memo.clear()
    assert isinstance(kept["a"], np.ndarray) and isinstance(kept["c"], np.ndarray)
    assert kept["b"] == "rebuilt"


def test_an_inner_memo_block_such_as_a_render_leaves_the_outer_blocks_budget_in_force():
    memo.clear()
    with memo.enabled(budget=3000):
        with memo.enabled(budget=1 << 20):  # e.g. render_scenario's own block
            pass
        memo.memo(("a",), lambda: np.zeros(500, np.float32))  # 2000 bytes
        memo.memo(("b",), lambda: np.zeros(500, np.float32))  # 4000 in all: a must go
        kept = {k: memo.memo((k,), lambda: "rebuilt") for k in "ab"}
    memo.clear()
    assert kept["a"] == "rebuilt" and isinstance(kept["b"], np.ndarray)


def test_each_thread_builds_its_own_value():
    import threading

    memo.clear()
    got: dict[str, object] = {}
    both = threading.Barrier(2)  # alive together: a finished thread's id may be reused

    def run(name: str) -> None:
        with memo.enabled():
            both.wait()
            got[name] = memo.memo(("test.thread",), object)
            both.wait()

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with memo.enabled():
        mine = memo.memo(("test.thread",), object)
    memo.clear()
    assert len({id(got["a"]), id(got["b"]), id(mine)}) == 3


def test_a_file_key_follows_edits_and_links_and_names_one_file_one_way(tmp_path, monkeypatch):
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(b"12")
    b.write_bytes(b"123")
    link = tmp_path / "take.bin"
    link.symlink_to(a)
    key = memo.file_key(link)
    assert key == memo.file_key(a) == (str(a.resolve()), 2, a.stat().st_mtime_ns)
    monkeypatch.chdir(tmp_path)
    assert memo.file_key("a.bin") == memo.file_key(tmp_path / "sub" / ".." / "a.bin") == key
    a.write_bytes(b"1234")  # edited: its size and time change the key
    assert memo.file_key(a)[1:] == (4, a.stat().st_mtime_ns)
    link.unlink()
    link.symlink_to(b)  # the link now names another file: its size and time are that file's
    assert memo.file_key(link)[1] == 3
