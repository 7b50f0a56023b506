"""Running a batch on Dask: a LocalCluster on this machine, or a running cluster by address.

:func:`open_client` gives a ``dask.distributed`` Client; :func:`run_batch` plans the tasks
(skipping recorded runs), submits them, has each finished task's table written through the
:class:`~audio.offline.batch.store.BatchStore` and shows a tqdm bar of runs done, failed and
remaining. A task's file has one name whichever worker ran it, so a task retried after a
worker died is still one file. Where the workers see the batch directory (a LocalCluster, or
a cluster on a shared file system: ``workers_write``) each worker writes its own task files and
sends back only their names and failed-run counts (:func:`store_task`), so the client, which
shares the machine with the workers on a LocalCluster, neither receives nor writes the tables;
otherwise the tables travel to the client, which writes them. Workers read the scenario files
and game installs from their own file system (a shared one, or barkbus installed with its
demos, on a cluster).
"""

from __future__ import annotations

import math
import sys
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from audio.offline.batch.runner import Task, failed_table, run_task
from audio.offline.batch.store import BatchStore

__all__ = [
    "LOCAL_CONFIG",
    "BatchSummary",
    "Stored",
    "auto_chunk",
    "open_client",
    "plan_tasks",
    "run_batch",
    "store_task",
]


LOCAL_CONFIG = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "200ms"}
"""Dask settings of the LocalCluster :func:`open_client` starts; a cluster started by the user
(``--scheduler``) keeps its own.

* The workers' statistical profiler is off: it wakes every 10 ms to sample the task thread's
  stack, and on runs of a few milliseconds that cost about 5 % of a batch's throughput
  (measured on the demos, one worker and two). The dashboard's Profile page stays empty.
* Each process measures its event loop's latency every 200 ms instead of every 20 ms: an idle
  two-worker cluster then takes 3-4 % of one core instead of 7 %, time a busy cluster's workers
  get back. A loop blocked for longer than ``distributed.admin.tick.limit`` (3 s) is still
  reported.

They are set in this process while the client is open, so a worker its nanny starts again after
a crash gets them too.
"""


@contextmanager
def open_client(
    workers: int | None = None, scheduler: str | None = None, processes: bool = True, quiet: bool = False
) -> Iterator[object]:
    """A Client: on ``scheduler`` (``tcp://HOST:8786``) if given, else on a new LocalCluster of
    ``workers`` single-threaded workers (processes unless ``processes=False``) configured by
    :data:`LOCAL_CONFIG`."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        client = Client(scheduler)
        try:
            yield client
        finally:
            client.close()
        return
    import os

    n = workers or os.cpu_count() or 1
    # set for the cluster's whole life: a nanny hands the config as it is when it starts a
    # worker process, and it starts one again after the worker died
    with dask.config.set(LOCAL_CONFIG):
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=processes,
            dashboard_address=":0",
            silence_logs=logging.ERROR if quiet else logging.WARNING,
        )
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
            cluster.close()


def dashboard_note(client: object) -> str:
    """The dashboard address, with a hint when bokeh (which serves it) is missing."""
    link = getattr(client, "dashboard_link", None) or "(none)"
    try:
        import bokeh  # noqa: F401
    except ImportError:
        return f"dask dashboard: {link} (install bokeh>=3.1 to serve it)"
    return f"dask dashboard: {link}"


TASKS_PER_SLOT = 8
"""Tasks an automatic chunk aims at per worker thread before the tapered end (:func:`plan_tasks`):
enough to balance scenarios of unequal cost, few enough that Dask's few milliseconds per task and
the task file's write stay a small share of runs of a few milliseconds (Radiata's decisions-only
runs take 2.6 ms: 16 tasks a thread gave two workers 739-753 runs/s, 8 gave 763-768, in the same
runs)."""
MIN_CHUNK, MAX_CHUNK = 10, 200
"""Seeds per task of an automatic chunk (a failed task's retry costs at most ``MAX_CHUNK`` runs)."""


def auto_chunk(runs: int, slots: int) -> int:
    """Seeds per task for ``runs`` (scenario, seed) runs on ``slots`` worker threads: about
    :data:`TASKS_PER_SLOT` tasks per thread, clamped to ``MIN_CHUNK..MAX_CHUNK`` seeds."""
    return max(MIN_CHUNK, min(MAX_CHUNK, math.ceil(runs / (TASKS_PER_SLOT * max(1, slots)))))


def plan_tasks(
    scenarios: dict[str, str],
    seeds: Sequence[int],
    chunk: int,
    decisions_only: bool,
    done: Collection[tuple[str, int]] = frozenset(),
    taper: int = 0,
) -> list[Task]:
    """Tasks of ``chunk`` seeds per scenario (sorted), leaving out the runs in ``done``.

    Parameters
    ----------
    taper:
        Worker threads to taper the plan's end for (0: every task ``chunk`` seeds). The tasks
        run about in plan order, so the last ones decide how long one thread waits for the
        others: with ``taper``, a task takes at most ``ceil(left / (2 * taper))`` seeds of the
        ``left`` runs still to plan (guided self-scheduling), so the sizes shrink towards one
        seed at the end instead of leaving a whole chunk to one thread.
    """
    todo = {key: [s for s in sorted(set(seeds)) if (key, s) not in done] for key in sorted(scenarios)}
    left = sum(len(v) for v in todo.values())
    tasks = []
    for key, runs in todo.items():
        i = 0
        while i < len(runs):
            size = max(1, chunk)
            if taper > 0:
                size = min(size, math.ceil(left / (2 * taper)))
            tasks.append(Task(key, scenarios[key], tuple(runs[i : i + size]), decisions_only))
            i += size
            left -= len(tasks[-1].seeds)
    return tasks


@dataclass
class BatchSummary:
    """What a batch did (runs counted by seed)."""

    planned: int = 0
    skipped: int = 0
    done: int = 0
    failed: int = 0
    files: list[Path] = field(default_factory=list)
    write_s: float = 0.0
    """Seconds the client spent writing task files (its serial share of the work)."""


def _failed_runs(table: pa.Table) -> int:
    kinds = table.column("kind").to_pylist()
    status = table.column("status").to_pylist()
    return sum(1 for k, s in zip(kinds, status) if k == "run" and s == "failed")


@dataclass(frozen=True)
class Stored:
    """What a worker that wrote its task's file sends back (:func:`store_task`)."""

    path: Path
    failed: int
    """Runs of the task recorded as failed."""


def store_task(task: Task, root: str, task_fn: Callable[[Task], pa.Table] = run_task) -> Stored:
    """Run ``task`` with ``task_fn`` on a worker and write its table into the batch directory
    ``root`` (atomically, under the task's one name).

    Parameters
    ----------
    task:
        The scenario and seeds to run.
    root:
        The batch directory as the worker sees it (the client's absolute path: a LocalCluster,
        or a shared file system mounted at the same path).
    task_fn:
        Runs the task and returns its table (:func:`~audio.offline.batch.runner.run_task`).
    """
    table = task_fn(task)
    path = BatchStore(root).write(task.key, task.seeds, table)
    return Stored(path, _failed_runs(table))


def run_batch(
    client: Any,
    store: BatchStore,
    scenarios: dict[str, str],
    seeds: Sequence[int],
    *,
    decisions_only: bool = True,
    resume: bool = False,
    chunk: int | None = None,
    progress: bool = True,
    on_task: Callable[[BatchSummary], None] | None = None,
    task_fn: Callable[[Task], pa.Table] = run_task,
    workers_write: bool = False,
) -> BatchSummary:
    """Run every (scenario, seed) not yet recorded in ``store`` on ``client``; see the module
    docstring. ``chunk`` is the seeds per task; ``None`` sizes it by :func:`auto_chunk` from the
    runs to do and the cluster's worker threads, and tapers the plan's last tasks for two
    threads or more (:func:`plan_tasks`). ``workers_write`` when the workers see
    ``store.root`` at the same path (they write their task files; the client only counts)."""
    from distributed import as_completed
    from tqdm import tqdm

    store.open(scenarios, "decisions" if decisions_only else "full", resume)
    done = store.finished() if resume else set()
    taper = 0
    if chunk is None:
        todo = sum(1 for key in scenarios for s in set(seeds) if (key, s) not in done)
        slots = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())
        chunk = auto_chunk(todo, slots)
        taper = slots if slots > 1 else 0  # one thread waits for no other
    tasks = plan_tasks(scenarios, seeds, chunk, decisions_only, done, taper)
    summary = BatchSummary(
        planned=sum(len(t.seeds) for t in tasks),
        skipped=len(scenarios) * len(set(seeds)) - sum(len(t.seeds) for t in tasks),
    )
    by_future = {}
    tag = uuid.uuid4().hex[:8]
    root = str(store.root.resolve())
    for t in tasks:
        key = f"barkbus-batch-{tag}-{t.key}-{t.seeds[0]}-{t.seeds[-1]}"
        if workers_write:
            fut = client.submit(store_task, t, root, task_fn, key=key)
        else:
            fut = client.submit(task_fn, t, key=key)
        by_future[fut] = t
    bar = tqdm(total=summary.planned, unit="run", desc="batch", file=sys.stderr, disable=not progress or None)
    try:
        for fut in as_completed(list(by_future)):
            task = by_future.pop(fut)
            try:
                got = fut.result()
            except Exception as exc:
                got = failed_table(task, f"{type(exc).__name__}: {exc}".replace("\n", " "))
            if isinstance(got, Stored):
                summary.files.append(got.path)
                bad = got.failed
            else:
                w0 = time.perf_counter()
                summary.files.append(store.write(task.key, task.seeds, got))
                summary.write_s += time.perf_counter() - w0
                bad = _failed_runs(got)
            summary.failed += bad
            summary.done += len(task.seeds) - bad
            bar.update(len(task.seeds))
            bar.set_postfix(
                done=summary.done,
                failed=summary.failed,
                remaining=summary.planned - summary.done - summary.failed,
                refresh=False,
            )
            if on_task is not None:
                on_task(summary)
    finally:
        bar.close()
        for fut in by_future:
            fut.cancel()
    return summary
