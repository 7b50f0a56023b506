"""Every public function and method of the port API, the engine (with the bus and voices it
exposes) and the codecs and containers documents each of its parameters in a numpydoc
``Parameters`` section (units live there: Hz, samples, console frames, dB, seconds).

Public means: named in the module's ``__all__`` and defined in that module; for a class, its
methods without a leading underscore and its constructor (documented in the class docstring,
numpydoc's convention, or in ``__init__``'s own). The section is parsed here, independently of
any docstring tool: a ``Parameters`` line underlined with dashes, then entries at the section's
indentation, ``name``, ``name : type``, ``name:`` or ``a, b:``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator

import pytest

import audio.codecs
import audio.containers

MODULES = [
    "audio.port.api",
    "audio.port.events",
    "audio.port.adapters",
    "audio.port.osc",
    "audio.core.engine",
    "audio.core.bus",
    "audio.core.voices",
    *sorted(
        m.name
        for pkg in (audio.codecs, audio.containers)
        for m in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + ".")
    ),
]

_HEADER = re.compile(r"^(\s*)([A-Z][A-Za-z ]+)\n\1-{3,}\s*$", re.M)
_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_][\w]*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")


def documented_parameters(doc: str | None) -> set[str] | None:
    """Names in the docstring's numpydoc ``Parameters`` section; ``None`` without one."""
    text = inspect.cleandoc(doc or "")
    heads = list(_HEADER.finditer(text))
    for i, h in enumerate(heads):
        if h.group(2).strip() != "Parameters":
            continue
        body = text[h.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        indent = len(h.group(1))
        names: set[str] = set()
        for line in body.splitlines():
            if not line.strip() or len(line) - len(line.lstrip()) != indent:
                continue
            m = _ENTRY.match(line.strip())
            if m:
                names |= {n.strip().lstrip("*") for n in m.group(1).split(",")}
        return names
    return None


def _parameters(fn: Callable[..., object], bound: bool) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    names = [p.name for p in sig.parameters.values()]
    return names[1:] if bound and names else names


def _public() -> Iterator[tuple[str, Callable[..., object], list[str], str | None]]:
    """(qualified name, callable, parameters to document, docstring holding them)."""
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if getattr(obj, "__module__", None) != modname:
                continue  # re-exported: checked where it is defined
            if inspect.isfunction(obj):
                yield f"{modname}.{name}", obj, _parameters(obj, False), obj.__doc__
            elif inspect.isclass(obj):
                yield from _class_members(modname, obj)


def _class_members(
    modname: str, cls: type
) -> Iterator[tuple[str, Callable[..., object], list[str], str | None]]:
    init = cls.__dict__.get("__init__")
    if init is not None and init.__module__ == modname and not dataclasses.is_dataclass(cls):
        doc = init.__doc__ if documented_parameters(init.__doc__) is not None else cls.__doc__
        yield f"{modname}.{cls.__name__}", init, _parameters(init, True), doc
    for attr, raw in vars(cls).items():
        if attr.startswith("_"):
            continue
        if isinstance(raw, staticmethod):
            fn, bound = raw.__func__, False
        elif isinstance(raw, classmethod):
            fn, bound = raw.__func__, True
        elif inspect.isfunction(raw):
            fn, bound = raw, True
        else:
            continue  # properties, constants, fields
        yield f"{modname}.{cls.__name__}.{attr}", fn, _parameters(fn, bound), fn.__doc__


PUBLIC = [p for p in _public() if p[2]]


def test_the_walk_covers_the_port_api_the_engine_and_the_codecs():
    names = {p[0] for p in PUBLIC}
    assert {
        "audio.port.api.open_system",
        "audio.port.api.VoicePort.post",
        "audio.core.engine.Engine.render",
        "audio.core.voices.VoiceManager.start",
        "audio.containers.fallback.decode_file",
    } <= names
    assert len(names) > 100


@pytest.mark.parametrize("name, fn, params, doc", PUBLIC, ids=[p[0] for p in PUBLIC])
def test_a_public_function_documents_every_parameter(name, fn, params, doc):
    documented = documented_parameters(doc)
    assert documented is not None, f"{name}: no numpydoc Parameters section"
    assert [p for p in params if p not in documented] == [], f"{name}: parameters not documented"


def test_the_parser_reads_numpydoc_sections_and_misses_what_is_missing():
    doc = """Summary.

    Parameters
    ----------
    sample_rate : int
        Hz.
    a, b:
        Samples.
    *args
        More.

    Returns
    -------
    gain : float
        dB.
    """
    assert documented_parameters(doc) == {"sample_rate", "a", "b", "args"}
    assert documented_parameters("Summary.\n\n``sample_rate`` in Hz.") is None
