"""The batch store: one Parquet file per finished task, written atomically.

Layout of a batch directory::

    DIR/batch.json                       scenarios (key -> path) and the mode
    DIR/runs/KEY-FIRST-LAST.parquet      one file per task (a chunk of seeds of one scenario)
    DIR/report/                          written by ``barkbus batch report DIR``

Every file holds one table (:data:`SCHEMA`) with a ``kind`` column: ``run`` (one row per
run: status, error, measurements), ``decision`` (one row per decision: seq, at, t, system,
outcome, speaker, event, reason, clip, take, detail JSON; ``variety`` on a line start: the
system's ``group/variant`` detail keys for repeat rates), ``expect`` (expected plays per
event and clip, in ``value``) and ``catalog`` (a line the run's speakers could play).
A file is written under a temporary name and renamed into place, so a file either is
complete or does not exist; :func:`finished` reads the run rows, so ``--resume`` skips
exactly the recorded runs, and :func:`load` keeps one copy of a (scenario, seed) even if
two files hold it (the first by file name).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from audio.core.errors import BarkbusError, FormatError

__all__ = ["RUN_FIELDS", "SCHEMA", "BatchStore", "table_from_rows"]

SCHEMA = pa.schema(
    [
        ("scenario", pa.string()),
        ("seed", pa.int64()),
        ("kind", pa.string()),
        ("seq", pa.int64()),
        ("at", pa.int64()),
        ("t", pa.float64()),
        ("system", pa.string()),
        ("outcome", pa.string()),
        ("speaker", pa.string()),
        ("event", pa.string()),
        ("event_name", pa.string()),
        ("reason", pa.string()),
        ("clip", pa.string()),
        ("take", pa.int64()),
        ("detail", pa.string()),
        ("variety", pa.string()),
        ("value", pa.float64()),
        ("mode", pa.string()),
        ("status", pa.string()),
        ("error", pa.string()),
        ("duration_s", pa.float64()),
        ("decisions", pa.int64()),
        ("voices", pa.int64()),
        ("peak_dbfs", pa.float64()),
        ("loudness_lufs", pa.float64()),
        ("clipped", pa.int64()),
        ("wall_s", pa.float64()),
        ("faults", pa.int64()),
    ]
)
"""Columns of every store file (nulls where a kind has no value)."""
RUN_FIELDS = (
    "mode",
    "status",
    "error",
    "duration_s",
    "decisions",
    "voices",
    "peak_dbfs",
    "loudness_lufs",
    "clipped",
    "wall_s",
    "faults",
)


def table_from_rows(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """A :data:`SCHEMA` table from row dicts (missing columns are null)."""
    return pa.Table.from_pylist(list(rows), schema=SCHEMA)


class BatchStore:
    """A batch directory (see the module docstring)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"

    # -- manifest --------------------------------------------------------------------------
    def open(self, scenarios: Mapping[str, str], mode: str, resume: bool) -> None:
        """Create the directory, or check that a resumed one holds the same kind of batch."""
        manifest = self.root / "batch.json"
        if manifest.is_file():
            old = json.loads(manifest.read_text(encoding="utf-8"))
            if not resume and any(self.runs.glob("*.parquet")):
                raise BarkbusError(
                    f"{self.root} already holds a batch: pass --resume to continue it, "
                    "or choose another -o DIR"
                )
            if old.get("mode") != mode:
                raise BarkbusError(f"{self.root} holds a {old.get('mode')} batch; this one is {mode}")
            for key, path in scenarios.items():
                if old.get("scenarios", {}).get(key, path) != path:
                    was = old["scenarios"][key]
                    raise BarkbusError(f"{self.root}: scenario {key!r} was {was}, now {path}")
            scenarios = {**old.get("scenarios", {}), **scenarios}
        self.runs.mkdir(parents=True, exist_ok=True)
        for tmp in self.runs.glob(".tmp-*"):
            tmp.unlink(missing_ok=True)  # a write cut short by a killed batch
        self._atomic_bytes(
            manifest,
            json.dumps({"mode": mode, "scenarios": dict(sorted(scenarios.items()))}, indent=1).encode(),
        )

    def _atomic_bytes(self, path: Path, data: bytes) -> None:
        tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    # -- files -----------------------------------------------------------------------------
    @staticmethod
    def task_name(key: str, seeds: Iterable[int]) -> str:
        s = sorted(seeds)
        return f"{key}-{s[0]:08d}-{s[-1]:08d}.parquet"

    def write(self, key: str, seeds: Iterable[int], table: pa.Table) -> Path:
        """Write one task's table atomically (temporary name, then rename); returns the path."""
        path = self.runs / self.task_name(key, seeds)
        tmp = self.runs / f".tmp-{uuid.uuid4().hex}.parquet"
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
        return path

    def files(self) -> list[Path]:
        if not self.runs.is_dir():
            return []
        return sorted(p for p in self.runs.glob("*.parquet") if not p.name.startswith("."))

    @staticmethod
    def _read(path: Path, **kw: Any) -> pa.Table:
        try:
            return pq.read_table(path, **kw)
        except (OSError, pa.ArrowException) as exc:
            raise FormatError(
                path,
                None,
                "a barkbus batch Parquet file (delete it to redo its runs)",
                str(exc).split("\n")[0],
            ) from None

    def finished(self) -> set[tuple[str, int]]:
        """(scenario key, seed) of every recorded run, failed ones included."""
        done: set[tuple[str, int]] = set()
        for f in self.files():
            t = self._read(f, columns=["scenario", "seed", "kind"])
            for sc, seed, kind in zip(*(t.column(c).to_pylist() for c in ("scenario", "seed", "kind"))):
                if kind == "run":
                    done.add((sc, int(seed)))
        return done

    def load(self) -> pa.Table:
        """Every file's rows, one copy per (scenario, seed): the copy in the first file by name."""
        owner: dict[tuple[str, int], int] = {}
        parts = []
        for i, f in enumerate(self.files()):
            t = self._read(f, schema=SCHEMA)
            keys = list(zip(t.column("scenario").to_pylist(), t.column("seed").to_pylist()))
            for k, kind in zip(keys, t.column("kind").to_pylist()):
                if kind == "run":
                    owner.setdefault(k, i)
            keep = [owner.get(k) == i for k in keys]
            parts.append(t.filter(pa.array(keep, pa.bool_())))
        return pa.concat_tables(parts) if parts else SCHEMA.empty_table()
