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
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from audio.core import memo
from audio.core.errors import BarkbusError, GraphError
from audio.core.schema import Struct, check_value, convert, did_you_mean
from audio.dsp.nodes import NODE_KINDS

__all__ = [
    "NODE_KINDS",
    "NodeSpec",
    "GraphSpec",
    "CurveSpec",
    "DuckerSpec",
    "GraphFile",
    "graphs_dir",
    "load_graph",
    "available_graphs",
]


GraphKind = Literal["voice", "submix", "bus"]
"""What a graph is: fed by a PCM source (voice), one instance per submix slot, or a bus."""


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


class DuckerSpec(Struct):
    """``[ducker]`` of a bus graph: the bus-level ducker."""

    volume_db: Annotated[float, msgspec.Meta(le=0.0)] = -9.0
    """Level the ducked bus falls to (dB, <= 0)."""
    fade_out_ms: Annotated[float, msgspec.Meta(ge=0.0, le=60_000.0)] = 50.0
    fade_in_ms: Annotated[float, msgspec.Meta(ge=0.0, le=60_000.0)] = 300.0
    recovery_ms: Annotated[float, msgspec.Meta(ge=0.0, le=60_000.0)] = 100.0
    bands: Annotated[int, msgspec.Meta(ge=1, le=64)] = 16


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


NonEmpty = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class GraphHead(Struct):
    """``[graph]``: name, kind, doc; or ``same_as`` another graph, with its sends rerouted."""

    name: str | None = None
    kind: GraphKind | None = None
    doc: str = ""
    same_as: NonEmpty | None = None
    reroute: dict[str, str] = {}


class NodeEntry(Struct):
    """One ``[[node]]``; its ``params`` are checked against its kind
    (:meth:`audio.dsp.nodes.Node.params_struct`)."""

    id: NonEmpty
    kind: str
    params: dict[str, Any] = {}
    input: NonEmpty | None = None
    to: str | None = None
    doc: str = ""


class CurveEntry(Struct):
    """``[curves.NAME]``: a piecewise-linear curve, ``x`` non-decreasing."""

    x: Annotated[list[float], msgspec.Meta(min_length=1, max_length=4096)]
    y: Annotated[list[float], msgspec.Meta(min_length=1, max_length=4096)]


class GraphFile(Struct):
    """A graph file as written (an alias is resolved before its nodes are read)."""

    graph: GraphHead
    node: list[NodeEntry] = []
    curves: dict[str, CurveEntry] = {}
    ducker: DuckerSpec | None = None


def graphs_dir() -> Path:
    """Where graph files live: ``$BARKBUS_GRAPHS``, else the package's ``audio/graphs`` (the
    repository's top-level ``graphs/``, shipped inside the wheel), read through
    :mod:`importlib.resources`."""
    env = os.environ.get("BARKBUS_GRAPHS")
    return Path(env) if env else _package_graphs()


@lru_cache(maxsize=1)
def _package_graphs() -> Path:
    """The package's ``audio/graphs`` (looked up once: :mod:`importlib.resources` takes about
    0.1 ms, and every graph an engine loads asks)."""
    return Path(str(resources.files("audio").joinpath("graphs")))


def available_graphs() -> list[str]:
    return sorted(p.stem for p in graphs_dir().glob("*.toml"))


_NODE_AT = re.compile(r"^node\[(?P<i>\d+)\](?:\.(?P<rest>.*))?$")


def _errors(path: str, raw: dict[str, Any]) -> Any:
    """An error factory for :func:`convert` naming the node by its id (``node 'a', field 'kind'``)."""
    raw_nodes = raw.get("node")
    nodes: list[Any] = raw_nodes if isinstance(raw_nodes, list) else []

    def make(source: str, where: str, problem: str) -> BarkbusError:
        m = _NODE_AT.match(where)
        if m is None:
            return GraphError(path, None, where or None, problem)
        i = int(m.group("i"))
        rn = nodes[i] if i < len(nodes) else None
        nid = rn.get("id") if isinstance(rn, dict) else None
        return GraphError(path, nid if isinstance(nid, str) and nid else f"#{i}", m.group("rest"), problem)

    return make


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


def _resolve_alias(
    path: str, p: Path, doc: dict[str, Any], head: GraphHead, read: list[tuple[str, int, int]] | None = None
) -> dict[str, Any]:
    """A ``same_as`` graph: its base graph's nodes and curves under this graph's name, with
    ``reroute`` applied to the sends' destinations; the base file's signature
    (:func:`audio.core.memo.file_key`, taken before it is read) is added to ``read``."""
    base = head.same_as
    if base is None or Path(base).name != base or base == p.stem:
        raise GraphError(path, None, "graph.same_as", f"must name another graph, got {base!r}")
    base_path = graphs_dir() / f"{base}.toml"
    if read is not None:
        try:
            read.append(memo.file_key(base_path))
        except OSError:
            pass  # reported by the read below
    based = _read_graph_doc(base_path)
    if "same_as" in based.get("graph", {}):
        raise GraphError(path, None, "graph.same_as", f"{base!r} is itself an alias")
    nodes = [
        {**n, "to": head.reroute.get(n["to"], n["to"])} if isinstance(n, dict) and "to" in n else n
        for n in based.get("node", [])
    ]
    own = {k: v for k, v in doc["graph"].items() if k not in ("same_as", "reroute")}
    return {**based, "node": nodes, "graph": {**based.get("graph", {}), **own}}


def _node(path: str, i: int, rn: NodeEntry, kind: str, nodes: list[NodeSpec], make: Any) -> NodeSpec:
    """Node ``i`` of a graph of ``kind``, its parameters checked against its kind and the
    nodes before it."""
    nid, nk = rn.id, rn.kind
    if nid in {n.id for n in nodes}:
        raise GraphError(path, nid, "id", "duplicate node id")
    spec = NODE_KINDS.get(nk)
    if spec is None:
        raise GraphError(
            path,
            nid,
            "kind",
            f"unknown node kind {nk!r}{did_you_mean(nk, NODE_KINDS)} (known: {', '.join(NODE_KINDS)})",
        )
    typed = convert(rn.params, spec.params_struct(), source=path, where=f"node[{i}].params", error=make)
    params = {k: float(v) for k, v in msgspec.structs.asdict(typed).items()}
    if i == 0 and rn.input is not None:
        raise GraphError(path, nid, "input", "the first node has no input")
    inp = rn.input if rn.input is not None else (nodes[-1].id if nodes else None)
    if inp is not None and inp not in {n.id for n in nodes}:
        raise GraphError(path, nid, "input", f"{inp!r} is not an earlier node")
    to = rn.to
    if nk == "Sen0":
        if to is None or not (to.startswith("bus:") or to.startswith("submix:")):
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


def _curves(path: str, curves: dict[str, CurveEntry]) -> dict[str, CurveSpec]:
    out: dict[str, CurveSpec] = {}
    for cname, c in curves.items():
        if len(c.x) != len(c.y):
            raise GraphError(path, None, f"curves.{cname}", "x and y must have the same, non-zero length")
        if any(b < a for a, b in zip(c.x, c.x[1:])):
            raise GraphError(path, None, f"curves.{cname}.x", "x must be non-decreasing")
        out[cname] = CurveSpec(tuple(c.x), tuple(c.y))
    return out


def load_graph(name_or_path: str | Path) -> GraphSpec:
    """Load and validate a graph by name (``graphs/NAME.toml``) or by path.

    The file is checked against :class:`GraphFile` (and each node's ``params`` against its
    kind's ranges); errors are :class:`GraphError` naming the file, the node and the field.
    Inside :func:`audio.core.memo.enabled` (a batch worker, a render) a file is read once,
    again when it or an alias's base graph file changes.
    """
    p = Path(name_or_path)
    if p.suffix != ".toml":
        p = graphs_dir() / f"{name_or_path}.toml"
    try:
        key = memo.file_key(p) if memo.active() else None
    except OSError:
        key = None  # reported by the read below
    if key is None:
        return _load_graph(p)
    spec, based_on = memo.memo(("dsp.graph", key), lambda: _load_tracked(p))
    return spec if all(_signature(k[0]) == k for k in based_on) else _load_graph(p)


def _signature(path: str) -> tuple[str, int, int] | None:
    try:
        return memo.file_key(path)
    except OSError:
        return None


def _load_tracked(p: Path) -> tuple[GraphSpec, tuple[tuple[str, int, int], ...]]:
    """The graph at ``p`` and the signatures of the other graph files it was built from."""
    read: list[tuple[str, int, int]] = []
    return _load_graph(p, read), tuple(read)


def _load_graph(p: Path, read: list[tuple[str, int, int]] | None = None) -> GraphSpec:
    path = str(p)
    doc = _read_graph_doc(p)
    if not isinstance(doc.get("graph"), dict):
        raise GraphError(path, None, "graph", "missing [graph] table")
    own = convert(doc, GraphFile, source=path, error=_errors(path, doc))
    name = own.graph.name if own.graph.name is not None else p.stem
    if own.graph.same_as is not None:
        doc = _resolve_alias(path, p, doc, own.graph, read)
    make = _errors(path, doc)
    gf = convert(doc, GraphFile, source=path, error=make)
    kind = gf.graph.kind
    if kind is None:
        raise GraphError(path, None, "graph.kind", "missing: one of 'voice', 'submix', 'bus'")
    if not gf.node:
        raise GraphError(path, None, "node", "a graph needs at least one [[node]]")
    nodes: list[NodeSpec] = []
    for i, rn in enumerate(gf.node):
        nodes.append(_node(path, i, rn, kind, nodes, make))
    _check_channels(path, kind, nodes)
    if gf.ducker is not None and kind != "bus":
        raise GraphError(path, None, "ducker", "only bus graphs have a ducker")
    return GraphSpec(name, kind, tuple(nodes), gf.graph.doc, path, _curves(path, gf.curves), gf.ducker)
