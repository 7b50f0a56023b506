from __future__ import annotations

from pathlib import Path

import pytest

from audio.dsp.bank import GraphBank
from audio.dsp.graph import load_graph


@pytest.fixture
def chain(tmp_path: Path):
    """Build a one-instance voice bank from a list of (kind, params) nodes; returns (bank, run)."""

    def make(nodes: list[tuple[str, dict]], kind: str = "voice", capacity: int = 1):
        lines = ["[graph]", 'name = "t"', f'kind = "{kind}"']
        first = "Rsp0" if kind == "voice" else "Sub0"
        lines += ["[[node]]", f'id = "{first}"', f'kind = "{first}"']
        for i, (k, params) in enumerate(nodes):
            lines += ["[[node]]", f'id = "n{i}"', f'kind = "{k}"']
            if params:
                lines.append(
                    "params = { " + ", ".join(f"{a} = {float(b)!r}" for a, b in params.items()) + " }"
                )
            if k == "Sen0":
                lines.append('to = "bus:master"')
        p = tmp_path / "t.toml"
        p.write_text("\n".join(lines) + "\n")
        bank = GraphBank(load_graph(p), capacity, 48_000, "stereo", max_block=4096)
        for v in range(capacity):
            bank.alloc(v)
        return bank

    return make
