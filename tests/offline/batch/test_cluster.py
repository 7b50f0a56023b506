"""On a 2-worker LocalCluster (processes): same report bytes as 1 worker; a killed worker costs nothing."""

from __future__ import annotations

import os
import signal

import pytest

from audio.offline.batch.cluster import open_client, run_batch
from audio.offline.batch.report import load_frames, write_report
from audio.offline.batch.store import BatchStore
from audio.offline.scenario import demo_scenario

pytestmark = pytest.mark.slow
DEMOS = {"plaza": str(demo_scenario("skate")), "dogfight": str(demo_scenario("sylpheed"))}


@pytest.fixture(scope="module")
def two_workers():
    with open_client(2, processes=True, quiet=True) as client:
        client.wait_for_workers(2)
        yield client


def _report_bytes(root) -> dict[str, bytes]:
    out = write_report(root).parent
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_two_workers_writing_their_own_files_give_a_report_byte_identical_to_one_worker(
    tmp_path, two_workers
):
    with open_client(1, processes=False, quiet=True) as one:
        run_batch(one, BatchStore(tmp_path / "one"), DEMOS, range(10), chunk=4, progress=False)
    s = run_batch(
        two_workers,
        BatchStore(tmp_path / "two"),
        DEMOS,
        range(10),
        chunk=1,
        progress=False,
        workers_write=True,
    )
    assert s.write_s == 0.0 and len(s.files) == 20  # the workers wrote every task file
    assert all(f.is_file() for f in s.files)
    a, b = _report_bytes(tmp_path / "one"), _report_bytes(tmp_path / "two")
    assert list(a) == list(b)
    for name in a:
        assert a[name] == b[name], name


def test_a_worker_killed_mid_batch_has_its_tasks_retried_and_nothing_counted_twice(tmp_path, two_workers):
    pids = two_workers.run(os.getpid)
    killed: list[int] = []

    def kill_one(summary) -> None:
        if killed or summary.done < 2:
            return
        busy = [w for w, keys in sorted(two_workers.processing().items()) if keys] or sorted(pids)
        killed.append(pids[busy[0]])
        os.kill(pids[busy[0]], signal.SIGKILL)

    seeds = range(14)
    s = run_batch(
        two_workers,
        BatchStore(tmp_path / "full"),
        {"dogfight": DEMOS["dogfight"]},
        seeds,
        decisions_only=False,
        chunk=1,
        progress=False,
        on_task=kill_one,
        workers_write=True,
    )
    assert killed, "the test never killed a worker"
    assert (s.done, s.failed) == (14, 0)
    full = load_frames(tmp_path / "full")
    assert sorted(full["run"]["seed"]) == list(seeds)
    assert full["run"]["loudness_lufs"].notna().all()
    with open_client(1, processes=False, quiet=True) as one:
        run_batch(one, BatchStore(tmp_path / "dry"), {"dogfight": DEMOS["dogfight"]}, seeds, progress=False)
    dry = load_frames(tmp_path / "dry")
    cols = [
        "scenario",
        "seed",
        "seq",
        "at",
        "system",
        "outcome",
        "speaker",
        "event",
        "clip",
        "take",
        "detail",
    ]
    assert full["decision"][cols].equals(dry["decision"][cols])


def _profiler_started(dask_worker) -> bool:
    return "profile" in dask_worker.periodic_callbacks


def test_the_local_clusters_workers_run_without_dasks_profiler_and_check_their_loop_every_200_ms(two_workers):
    import dask

    two_workers.restart()  # a worker its nanny starts again (after a crash) keeps the settings
    enabled = two_workers.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
    assert len(enabled) == 2 and not any(enabled.values())
    ticks = two_workers.run(lambda dask_worker: dask_worker._tick_interval)
    assert set(ticks.values()) == {0.2}  # seconds between event-loop latency checks (default 0.02)
    # and no worker started the profiler's 10 ms sampling callback
    assert not any(two_workers.run(_profiler_started).values())
