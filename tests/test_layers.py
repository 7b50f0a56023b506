"""The rooms form layers: the import-linter contract covers every core module, and no module
imports itself back through others (imports inside functions count; annotation-only imports
under ``if TYPE_CHECKING:`` do not). CI runs ``lint-imports`` on the same contract."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _layers() -> list[str]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in cfg["contracts"] if c["type"] == "layers"]
    return layers


def _names(layer: str) -> list[str]:
    return [n.strip().strip("()") for part in layer.split("|") for n in part.split(":")]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    sys.path.insert(0, str(ROOT))
    return grimp.build_graph("audio", cache_dir=None, exclude_type_checking_imports=True)


def test_every_core_module_sits_in_exactly_one_layer():
    named = [n for layer in _layers() for n in _names(layer)]
    core = sorted(
        f"audio.core.{p.stem}" for p in (ROOT / "audio" / "core").glob("*.py") if p.stem != "__init__"
    )
    assert [m for m in core if named.count(m) != 1] == []


def test_no_module_imports_itself_back_through_others(graph):
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    assert cycles == []


def test_the_cycle_check_sees_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / "ringpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import ringpkg.b\n")
    (pkg / "b.py").write_text("def f():\n    import ringpkg.a\n")
    sys.path.insert(0, str(tmp_path))
    try:
        g = grimp.build_graph("ringpkg", cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    assert "ringpkg.a" in g.find_modules_directly_imported_by("ringpkg.b")


def test_no_front_end_names_a_game_module(graph):
    """Front ends reach games only through the registry (``audio.games``): ``barkbus encode``
    finds Starlancer's ``.ut`` as a registered GameCodec, not by importing the game."""
    front = [
        m for m in graph.modules if m.split(".")[1:2] in (["cli"], ["port"], ["live"], ["offline"], ["core"])
    ]
    named = sorted(
        f"{m} -> {w}"
        for m in front
        for w in graph.find_modules_directly_imported_by(m)
        if w.startswith("audio.games.")
    )
    assert named == []


def test_pyproject_layers_list_no_ignored_imports():
    """Every exception to the layers would be listed here; there are none to justify."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert [c.get("ignore_imports", []) for c in cfg["contracts"]] == [[], []]
