"""Docstrings that share numpydoc ``Parameters`` entries, so a parameter two public functions
take alike is described once (where its meaning and units live) and both show it.

:func:`share_parameters` runs once at import: it copies entries from one function's
``Parameters`` section to the end of another's (adding the section when it has none).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TypeVar

__all__ = ["share_parameters"]

F = TypeVar("F", bound=Callable[..., object])

_SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}[ \t]*$", re.M)


def _parameters_section(doc: str) -> tuple[int, int] | None:
    """Where the cleaned ``doc``'s ``Parameters`` entries start and end, or ``None``."""
    heads = list(_SECTION.finditer(doc))
    for i, h in enumerate(heads):
        if h.group(1).strip() == "Parameters":
            return h.end(), heads[i + 1].start() if i + 1 < len(heads) else len(doc)
    return None


def _entries(doc: str) -> dict[str, str]:
    """The ``Parameters`` entries of the cleaned ``doc``: name -> its lines (name line first)."""
    span = _parameters_section(doc)
    if span is None:
        raise ValueError("the source docstring has no Parameters section")
    entries: dict[str, str] = {}
    name = None
    for line in doc[span[0] : span[1]].strip("\n").splitlines():
        if line and not line[0].isspace():
            name = line.split(":", 1)[0].strip()
            entries[name] = line
        elif name is not None:
            entries[name] += "\n" + line
    return {k: v.rstrip() for k, v in entries.items()}


def share_parameters(source: Callable[..., object], *names: str) -> Callable[[F], F]:
    """Decorator: append ``source``'s ``Parameters`` entries ``names`` (all of them when none
    are named) to the decorated function's docstring, whose ``Parameters`` section, if it has
    one, must be its last section.

    Parameters
    ----------
    source:
        The function whose docstring describes the parameters.
    names:
        Parameter names to copy, in this order (none: every entry of ``source``).
    """

    def apply(fn: F) -> F:
        shared = _entries(inspect.cleandoc(source.__doc__ or ""))
        missing = [n for n in names if n not in shared]
        if missing:
            raise ValueError(f"{source.__qualname__} documents no parameter {', '.join(missing)}")
        text = inspect.cleandoc(fn.__doc__ or "")
        span = _parameters_section(text)
        if span is None:
            text += "\n\nParameters\n----------"
        elif span[1] != len(text):
            raise ValueError(f"{fn.__qualname__}: Parameters must be the docstring's last section")
        fn.__doc__ = text.rstrip("\n") + "\n" + "\n".join(shared[n] for n in names or shared)
        return fn

    return apply
