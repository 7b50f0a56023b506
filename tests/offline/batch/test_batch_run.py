"""The batch path on an in-process Dask cluster: runs, failures recorded, resume, report."""

from __future__ import annotations

import logging

import pytest

from audio.offline.batch.cluster import auto_chunk, open_client, plan_tasks, run_batch
from audio.offline.batch.report import load_frames, write_report
from audio.offline.batch.runner import Task, failed_table, run_task
from audio.offline.batch.store import BatchStore
from audio.offline.scenario import demo_scenario

DEMOS = {"plaza": str(demo_scenario("skate")), "dogfight": str(demo_scenario("sylpheed"))}


def _corrupt_scenario(tmp_path) -> str:
    (tmp_path / "take.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEnot a real take")
    p = tmp_path / "broken.toml"
    p.write_text(
        '[scenario]\nduration = 1.0\n[[emitter]]\nid = "e"\nposition = [0, 0, 1]\n'
        '[[event]]\nt = 0.1\ntype = "play"\nemitter = "e"\nfile = "take.wav"\n'
    )
    return str(p)


def _explode_on_seed_2(task: Task):
    if 2 in task.seeds and task.key == "plaza":
        raise RuntimeError("worker-side failure")
    return run_task(task)


def test_plan_tasks_chunks_sorted_seeds_and_leaves_out_finished_runs():
    tasks = plan_tasks({"b": "/b", "a": "/a"}, [5, 1, 2, 3], 2, True, done={("a", 2)})
    assert [(t.key, t.seeds) for t in tasks] == [("a", (1, 3)), ("a", (5,)), ("b", (1, 2)), ("b", (3, 5))]


def test_a_tapered_plan_shrinks_its_last_tasks_towards_one_seed_and_runs_every_seed_once():
    # 200 runs, chunk 10, two threads: a task takes min(10, ceil(left / 4)) seeds; left falls by
    # 10 from 200 to 40 (17 tasks of 10), then ceil(30/4) = 8, ceil(22/4) = 6, 4, 3, 3, 2, 1, 1, 1, 1
    tasks = plan_tasks({"a": "/a"}, range(200), 10, False, taper=2)
    assert [len(t.seeds) for t in tasks] == [10] * 17 + [8, 6, 4, 3, 3, 2, 1, 1, 1, 1]
    assert [s for t in tasks for s in t.seeds] == list(range(200))
    # the taper counts the runs of the scenarios planned after this one: the first keeps its chunks
    two = plan_tasks({"b": "/b", "a": "/a"}, range(40), 10, True, taper=2)
    assert [(t.key, len(t.seeds)) for t in two][:4] == [("a", 10)] * 4
    assert [len(t.seeds) for t in two if t.key == "b"] == [10, 8, 6, 4, 3, 3, 2, 1, 1, 1, 1]


@pytest.mark.parametrize("workers_write", [False, True], ids=["client-writes", "workers-write"])
def test_batch_records_failures_goes_on_and_resumes_without_redoing(tmp_path, workers_write):
    scenarios = {**DEMOS, "broken": _corrupt_scenario(tmp_path)}
    store = BatchStore(tmp_path / "runs")
    with open_client(1, processes=False, quiet=True) as client:
        s = run_batch(
            client,
            store,
            scenarios,
            range(4),
            chunk=2,
            progress=False,
            task_fn=_explode_on_seed_2,
            workers_write=workers_write,
        )
        assert (s.planned, s.done, s.failed) == (12, 10, 2)  # the corrupt take costs a voice, not the run
        runs = load_frames(store.root)["run"].set_index(["scenario", "seed"])
        assert runs.loc[("dogfight", 3), "status"] == "ok"
        assert runs.loc[("broken", 0), "status"] == "ok" and runs.loc[("broken", 0), "faults"] == 1
        assert "take.wav" in runs.loc[("broken", 0), "error"]
        assert runs.loc[("plaza", 3), "error"] == "RuntimeError: worker-side failure"
        again = run_batch(
            client,
            store,
            scenarios,
            range(5),
            resume=True,
            chunk=2,
            progress=False,
            workers_write=workers_write,
        )
    assert (again.planned, again.skipped, again.done) == (3, 12, 3)
    f = load_frames(store.root)
    assert len(f["run"]) == 15 and not f["run"].duplicated(["scenario", "seed"]).any()
    page = write_report(store.root)
    text = page.read_text()
    assert "worker-side failure" in text and "Plays against the weights" in text


def test_a_second_batch_into_a_used_directory_needs_resume(tmp_path):
    from audio.core.errors import BarkbusError

    store = BatchStore(tmp_path)
    with open_client(1, processes=False, quiet=True) as client:
        run_batch(client, store, {"dogfight": DEMOS["dogfight"]}, [0], progress=False)
        with pytest.raises(BarkbusError, match="--resume"):
            run_batch(client, store, {"dogfight": DEMOS["dogfight"]}, [1], progress=False)


def test_a_task_records_voice_faults_in_its_run_rows_without_a_log_line_per_seed(caplog):
    # The Sylpheed demo has one message (MSG_ADAN_789) with no recording: a run that picks it faults.
    task = Task("dogfight", DEMOS["dogfight"], (0, 1, 2, 3, 4, 5), True)
    with caplog.at_level("WARNING", logger="barkbus.faults"):
        table = run_task(task)
    runs = [r for r in table.to_pylist() if r["kind"] == "run"]
    faulted = [r for r in runs if r["faults"]]
    assert len(runs) == 6 and len(faulted) >= 2
    assert all("MSG_ADAN_789" in r["error"] for r in faulted)
    assert not [r for r in caplog.records if r.name == "barkbus.faults"]
    # Outside a task the engine still warns (a live session or a single render wants the line).
    assert logging.getLogger("barkbus.faults").getEffectiveLevel() <= logging.WARNING


@pytest.mark.parametrize(
    ("runs", "slots", "chunk"),
    [
        (40, 2, 10),  # few runs: the 10-seed floor
        (1_600, 2, 100),  # 1,600 / (8 x 2)
        (10_000, 2, 200),  # 625 -> the 200-seed ceiling
        (100_000, 64, 196),  # ceil(100,000 / 512)
    ],
)
def test_an_automatic_chunk_gives_about_eight_tasks_per_worker_thread_within_10_to_200_seeds(
    runs, slots, chunk
):
    assert auto_chunk(runs, slots) == chunk


def _no_run(task: Task):
    return failed_table(task, "not run")


def test_a_batch_without_a_chunk_sizes_its_tasks_from_the_runs_to_do_and_the_workers(tmp_path):
    with open_client(1, processes=False, quiet=True) as client:
        s = run_batch(
            client,
            BatchStore(tmp_path / "b"),
            {"plaza": DEMOS["plaza"]},
            range(400),
            progress=False,
            task_fn=_no_run,
        )
    # 400 runs on one worker thread: auto_chunk(400, 1) = 50 seeds -> 8 tasks, one file each
    assert s.failed == 400 and len(s.files) == 8
