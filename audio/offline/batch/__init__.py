"""``barkbus batch``: speech-variety QA over thousands of seeds on Dask.

:mod:`~audio.offline.batch.runner` (tasks), :mod:`~audio.offline.batch.cluster` (Client,
submission, progress), :mod:`~audio.offline.batch.store` (Parquet per task),
:mod:`~audio.offline.batch.shares` (what the game systems expect),
:mod:`~audio.offline.batch.report` (aggregation, HTML/PNG/CSV) and
:mod:`~audio.offline.batch.cli` (``barkbus batch``).
"""
