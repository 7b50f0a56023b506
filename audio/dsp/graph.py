"""DSP graphs as data: the ``graphs/*.toml`` files and the node kinds they may use.

A graph file::

    [graph]
    name = "skate_stream_voice"
    kind = "voice"          # voice (fed by a PCM source) | submix (one instance per slot) | bus
    doc = "..."

    [[node]]
    id = "PI20"             # unique within the graph; parameters are addressed "PI20.gain"
    kind = "PI20"           # one of NODE_KINDS (audio.dsp.nodes)
    params = { centre_hz = 96000.0, gain = 1.0, q = 3.0 }
    input = "Rsp0"          # optional: defaults to the previous node (chain order = file order)

    [[node]]
    id = "Sen0_env"
    kind = "Sen0"
    to = "bus:environment"  # Sen0 only: "bus:NAME" or "submix:GRAPH" (the voice's slot instance)

    [curves.peak_centre_hz] # optional data curves the game drives the graph with
    x = [...]
    y = [...]

    [ducker]                # bus graphs only: the bus-level ducker
    volume_db = -9.0
    fade_out_ms = 50.0
    fade_in_ms = 300.0
    recovery_ms = 100.0

A voice graph starts with ``Rsp0``; submix and bus graphs start with ``Sub0``. Signals are
mono until ``Pn21``, after which they have the master's channel count; buses are
multichannel throughout. A graph's signal leaves only through ``Sen0`` nodes, except the
``master`` bus, whose last node is the engine's output.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from audio.core.errors import GraphError
from audio.core.schema import check_value
from audio.dsp.nodes import NODE_KINDS

__all__ = [
    "NODE_KINDS",
    "NodeSpec",
    "GraphSpec",
    "CurveSpec",
    "DuckerSpec",
    "graphs_dir",
    "load_graph",
    "available_graphs",
]


_GRAPH_KINDS = ("voice", "submix", "bus")


@dataclass(frozen=True)
class NodeSpec:
    id: str
    kind: str
    params: dict[str, float]
    input: str | None
    to: str | None = None


@dataclass(frozen=True)
class CurveSpec:
    """A piecewise-linear curve: below x[0] -> y[0], at or above x[-1] -> y[-1]."""

    x: tuple[float, ...]
    y: tuple[float, ...]


@dataclass(frozen=True)
class DuckerSpec:
    volume_db: float = -9.0
    fade_out_ms: float = 50.0
    fade_in_ms: float = 300.0
    recovery_ms: float = 100.0
    bands: int = 16


@dataclass(frozen=True)
class GraphSpec:
    name: str
    kind: str
    nodes: tuple[NodeSpec, ...]
    doc: str = ""
    path: str = "<graph>"
    curves: dict[str, CurveSpec] = field(default_factory=dict)
    ducker: DuckerSpec | None = None

    def node(self, node_id: str) -> NodeSpec:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def param_keys(self) -> list[str]:
        """Every settable parameter as ``"NODE.param"``."""
        return [f"{n.id}.{p}" for n in self.nodes for p in NODE_KINDS[n.kind].PARAMS]


def graphs_dir() -> Path:
    """Where graph files live: ``$BARKBUS_GRAPHS``, else the package's ``audio/graphs`` (the
    repository's top-level ``graphs/``, shipped inside the wheel), read through
    :mod:`importlib.resources`."""
    env = os.environ.get("BARKBUS_GRAPHS")
    return Path(env) if env else Path(str(resources.files("audio").joinpath("graphs")))


def available_graphs() -> list[str]:
    return sorted(p.stem for p in graphs_dir().glob("*.toml"))


def _num(path: str, node: str | None, fld: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise GraphError(path, node, fld, f"must be a number, got {v!r}")
    return float(v)


def _read_graph_doc(p: Path) -> dict[str, Any]:
    path = str(p)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GraphError(
            path, None, None, f"no such graph (available: {', '.join(available_graphs())})"
        ) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise GraphError(path, None, None, f"not valid TOML: {exc}") from None
    problems = check_value(doc, "")
    if problems:
        raise GraphError(path, None, problems[0][0] or None, problems[0][1])
    return doc


def _resolve_alias(path: str, p: Path, doc: dict[str, Any]) -> dict[str, Any]:
    """A ``same_as`` graph: its base graph's nodes and curves under this graph's name, with
    ``reroute`` applied to the sends' destinations."""
    g = doc["graph"]
    base = g["same_as"]
    if not isinstance(base, str) or Path(base).name != base or base == p.stem:
        raise GraphError(path, None, "graph.same_as", f"must name another graph, got {base!r}")
    based = _read_graph_doc(graphs_dir() / f"{base}.toml")
    if "same_as" in based.get("graph", {}):
        raise GraphError(path, None, "graph.same_as", f"{base!r} is itself an alias")
    reroute = g.get("reroute", {})
    if not isinstance(reroute, dict) or not all(isinstance(v, str) for v in reroute.values()):
        raise GraphError(path, None, "graph.reroute", "must map routes to routes (strings)")
    nodes = [
        {**n, "to": reroute.get(n["to"], n["to"])} if isinstance(n, dict) and "to" in n else n
        for n in based.get("node", [])
    ]
    own = {k: v for k, v in g.items() if k not in ("same_as", "reroute")}
    return {**based, "node": nodes, "graph": {**based.get("graph", {}), **own}}


def _params(path: str, nid: str, nk: str, rn: dict[str, Any]) -> dict[str, float]:
    spec = NODE_KINDS[nk]
    params = {k: p.default for k, p in spec.PARAMS.items()}
    rp = rn.get("params", {})
    if not isinstance(rp, dict):
        raise GraphError(path, nid, "params", "must be a table")
    for k, v in rp.items():
        if k not in spec.PARAMS:
            raise GraphError(
                path,
                nid,
                f"params.{k}",
                f"{nk} has no parameter {k!r} (it has: {', '.join(spec.PARAMS) or 'none'})",
            )
        val = _num(path, nid, f"params.{k}", v)
        lo, hi = spec.PARAMS[k].lo, spec.PARAMS[k].hi
        if not lo <= val <= hi:
            raise GraphError(path, nid, f"params.{k}", f"{val} is outside {lo}..{hi}")
        params[k] = val
    return params


def _node(path: str, i: int, rn: Any, kind: str, nodes: list[NodeSpec]) -> NodeSpec:
    """Node ``i`` of a graph of ``kind``, checked against the nodes before it."""
    if not isinstance(rn, dict):
        raise GraphError(path, f"#{i}", None, "each [[node]] must be a table")
    seen = {n.id for n in nodes}
    nid = rn.get("id")
    if not isinstance(nid, str) or not nid:
        raise GraphError(path, f"#{i}", "id", "missing or empty node id")
    if nid in seen:
        raise GraphError(path, nid, "id", "duplicate node id")
    nk = rn.get("kind")
    if nk not in NODE_KINDS:
        raise GraphError(path, nid, "kind", f"unknown node kind {nk!r} (known: {', '.join(NODE_KINDS)})")
    unknown = set(rn) - {"id", "kind", "params", "input", "to", "doc"}
    if unknown:
        raise GraphError(path, nid, sorted(unknown)[0], "unknown field")
    params = _params(path, nid, nk, rn)
    inp = rn.get("input", nodes[-1].id if nodes else None)
    if i == 0 and "input" in rn:
        raise GraphError(path, nid, "input", "the first node has no input")
    if inp is not None and inp not in seen:
        raise GraphError(path, nid, "input", f"{inp!r} is not an earlier node")
    to = rn.get("to")
    if nk == "Sen0":
        if not isinstance(to, str) or not (to.startswith("bus:") or to.startswith("submix:")):
            raise GraphError(path, nid, "to", 'a Sen0 needs to = "bus:NAME" or "submix:GRAPH"')
    elif to is not None:
        raise GraphError(path, nid, "to", "only Sen0 nodes have a destination")
    first = "Rsp0" if kind == "voice" else "Sub0"
    if i == 0 and nk != first:
        raise GraphError(path, nid, "kind", f"a {kind} graph starts with {first}")
    if i > 0 and nk in ("Rsp0", "Sub0"):
        raise GraphError(path, nid, "kind", f"{nk} may only be the first node")
    return NodeSpec(nid, nk, params, inp, to)


def _check_channels(path: str, kind: str, nodes: list[NodeSpec]) -> None:
    """Signals are mono until a Pn21, and a Pn21 pans a mono input."""
    mono = {nodes[0].id: kind != "bus"}
    for n in nodes[1:]:
        src = mono[n.input or nodes[0].id]
        if n.kind == "Pn21" and not src:
            raise GraphError(path, n.id, "input", "Pn21 pans a mono signal; its input is multichannel")
        mono[n.id] = False if n.kind == "Pn21" else src


def _curves(path: str, doc: dict[str, Any]) -> dict[str, CurveSpec]:
    curves: dict[str, CurveSpec] = {}
    for cname, c in (doc.get("curves") or {}).items():
        if not isinstance(c, dict) or not isinstance(c.get("x"), list) or not isinstance(c.get("y"), list):
            raise GraphError(path, None, f"curves.{cname}", "a curve needs lists x and y")
        xs = tuple(_num(path, None, f"curves.{cname}.x", v) for v in c["x"])
        ys = tuple(_num(path, None, f"curves.{cname}.y", v) for v in c["y"])
        if len(xs) != len(ys) or not xs:
            raise GraphError(path, None, f"curves.{cname}", "x and y must have the same, non-zero length")
        if any(b < a for a, b in zip(xs, xs[1:])):
            raise GraphError(path, None, f"curves.{cname}.x", "x must be non-decreasing")
        curves[cname] = CurveSpec(xs, ys)
    return curves


def _ducker(path: str, kind: str, d: Any) -> DuckerSpec:
    if kind != "bus":
        raise GraphError(path, None, "ducker", "only bus graphs have a ducker")
    if not isinstance(d, dict):
        raise GraphError(path, None, "ducker", "must be a table")
    known = {"volume_db", "fade_out_ms", "fade_in_ms", "recovery_ms", "bands"}
    bad = set(d) - known
    if bad:
        raise GraphError(path, None, f"ducker.{sorted(bad)[0]}", "unknown field")
    vals = {k: _num(path, None, f"ducker.{k}", v) for k, v in d.items()}
    if vals.get("volume_db", -9.0) > 0:
        raise GraphError(path, None, "ducker.volume_db", "must be <= 0 dB")
    for k in ("fade_out_ms", "fade_in_ms", "recovery_ms"):
        if vals.get(k, 0.0) < 0:
            raise GraphError(path, None, f"ducker.{k}", "must be >= 0")
    bands = int(vals.pop("bands", 16))
    if not 1 <= bands <= 64:
        raise GraphError(path, None, "ducker.bands", "must be 1..64")
    return DuckerSpec(**vals, bands=bands)


def load_graph(name_or_path: str | Path) -> GraphSpec:
    """Load and validate a graph by name (``graphs/NAME.toml``) or by path.

    Errors are :class:`GraphError` naming the file, the node and the field.
    """
    p = Path(name_or_path)
    if p.suffix != ".toml":
        p = graphs_dir() / f"{name_or_path}.toml"
    path = str(p)
    doc = _read_graph_doc(p)
    if not isinstance(doc.get("graph"), dict):
        raise GraphError(path, None, "graph", "missing [graph] table")
    name = doc["graph"].get("name", p.stem)
    if "same_as" in doc["graph"]:
        doc = _resolve_alias(path, p, doc)
    g = doc["graph"]
    kind = g.get("kind")
    if kind not in _GRAPH_KINDS:
        raise GraphError(path, None, "graph.kind", f"must be one of {_GRAPH_KINDS}, got {kind!r}")
    raw_nodes = doc.get("node")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise GraphError(path, None, "node", "a graph needs at least one [[node]]")
    nodes: list[NodeSpec] = []
    for i, rn in enumerate(raw_nodes):
        nodes.append(_node(path, i, rn, kind, nodes))
    _check_channels(path, kind, nodes)
    ducker = _ducker(path, kind, doc["ducker"]) if "ducker" in doc else None
    return GraphSpec(str(name), kind, tuple(nodes), str(g.get("doc", "")), path, _curves(path, doc), ducker)
