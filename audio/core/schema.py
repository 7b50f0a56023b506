"""The one validation layer for every text input, built on msgspec.

Scenario files (every game section and event), captures, tuning files, graph files and
port/OSC events are parsed by their loaders (``tomllib``, ``json``) and then converted to
typed records here: :func:`convert` checks a parsed value against a type (a
``msgspec.Struct``, an event dataclass, ``Annotated`` ranges, ``Literal`` choices) in strict
mode, so booleans are booleans, integers are integers and strings are strings. Before that
it walks the value once: ``nan`` and ``inf`` are refused wherever a number is read, strings and
lists are bounded, nesting is bounded. Unknown keys are refused with a "did you mean"
suggestion. Every error names the source file, the path to the field (``event[3].position[1]``)
and what was expected, as the error class the caller chooses (:class:`ScenarioError` by default).

msgspec was chosen over pydantic for its import time (about 30 ms against 55 ms here) and its
speed (about 2 us per event).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from audio.core.errors import BarkbusError, ScenarioError

__all__ = [
    "MAX_DEPTH",
    "Limits",
    "Struct",
    "check_value",
    "convert",
    "did_you_mean",
    "field_names",
    "reject_unknown",
]

T = TypeVar("T")
MAX_DEPTH = 32
"""Deepest nesting of arrays and tables accepted in any text input."""


class Struct(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Base of the schema records: unknown keys are refused (declare subclasses with
    ``kw_only=True`` so required fields may follow optional ones)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """Bounds on untrusted values: longest string (characters), longest list (items)."""

    max_str: int = 4096
    max_items: int = 1_000_000


ErrorFactory = Callable[[str, str, str], BarkbusError]


def _scenario_error(source: str, where: str, problem: str) -> BarkbusError:
    return ScenarioError(source, where or None, problem)


def did_you_mean(name: str, known: typing.Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known name, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\n``), so a name from a file stays on one line."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _join(where: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{where}[{key}]"
    key = printable(key)
    return f"{where}.{key}" if where else key


def check_value(value: Any, where: str, limits: Limits = Limits()) -> list[tuple[str, str]]:
    """Problems in a parsed value: non-finite numbers, integers beyond 64 bits, over-long
    strings and lists, deep nesting.

    Returns ``[(path, problem), ...]`` (empty when the value is fine); iterative, so a value
    nested a million deep costs no recursion.
    """
    problems: list[tuple[str, str]] = []
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack and len(problems) < 8:
        v, at, depth = stack.pop()
        if isinstance(v, float):
            if not math.isfinite(v):
                problems.append((at, f"expected a finite number, got {v!r}"))
        elif isinstance(v, int) and not isinstance(v, bool):
            if not -(2**63) <= v < 2**64:
                problems.append((at, f"integer out of range: {v}"))
        elif isinstance(v, str):
            if len(v) > limits.max_str:
                problems.append((at, f"expected a string of at most {limits.max_str} characters"))
        elif isinstance(v, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                problems.append((at, f"nested deeper than {MAX_DEPTH} levels"))
                continue
            if len(v) > limits.max_items:
                problems.append((at, f"expected at most {limits.max_items} items, got {len(v)}"))
                continue
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in items:
                stack.append((x, _join(at, k if isinstance(k, int) else str(k)), depth + 1))
    return problems


def field_names(tp: Any) -> list[str]:
    """The field names of a Struct or dataclass type (``[]`` for anything else)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return list(tp.__struct_fields__)
    if dataclasses.is_dataclass(tp):
        return [f.name for f in dataclasses.fields(tp)]
    return []


def reject_unknown(
    value: dict[str, Any],
    known: typing.Iterable[str],
    source: str,
    where: str,
    error: ErrorFactory | None = None,
) -> None:
    """Refuse keys of ``value`` that are not in ``known``, suggesting the closest one."""
    known = list(known)
    for k in value:
        if k not in known:
            raise (error or _scenario_error)(
                source, _join(where, str(k)), f"unknown field{did_you_mean(str(k), known)}"
            )


_MSG = re.compile(r"^(?P<msg>.*?)(?: - at (?P<key>`key` in )?`\$(?P<path>[^`]*)`)?$", re.S)
_UNKNOWN = re.compile(r"unknown field `(?P<name>[^`]*)`")
_CHOICE = re.compile(r"^Invalid enum value (?P<value>.*)$", re.S)


def _type_at(tp: Any, parts: list[str | int]) -> Any:
    """The declared type at a path inside ``tp`` (for did-you-mean on nested records)."""
    for part in parts:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
            origin = typing.get_origin(tp)
        if isinstance(part, int):
            args = typing.get_args(tp)
            tp = args[0] if args else Any
        elif field_names(tp):
            tp = typing.get_type_hints(tp).get(part, Any)
        else:
            return Any
    return tp


def _split_path(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path):
        parts.append(int(index) if index else name)
    return parts


def _render(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        out = _join(out, p)
    return out


def _choice_problem(value: str, tp: Any) -> str:
    """``expected one of 'a', 'b', got 'c' (did you mean 'b'?)`` for a value outside a ``Literal``."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        tp = next((a for a in typing.get_args(tp) if typing.get_origin(a) is typing.Literal), tp)
    if typing.get_origin(tp) is not typing.Literal:
        return f"invalid value {value}"
    choices = [str(a) for a in typing.get_args(tp)]
    hint = did_you_mean(value.strip("'"), choices)
    return f"expected one of {', '.join(map(repr, choices))}, got {value}{hint}"


def convert(
    value: Any,
    tp: type[T],
    *,
    source: str,
    where: str = "",
    error: ErrorFactory | None = None,
    limits: Limits = Limits(),
) -> T:
    """Check ``value`` (parsed TOML/JSON) and convert it to ``tp``.

    Parameters
    ----------
    value:
        The parsed value.
    tp:
        A :class:`Struct`, an event dataclass, or any type msgspec converts to.
    source:
        The file (or ``"<osc>"``, ``"<port>"``) named in errors.
    where:
        The path of ``value`` inside ``source`` (``"event[3]"``), prefixed to error paths.
    error:
        ``error(source, where, problem) -> BarkbusError``; default :class:`ScenarioError`.

    Raises
    ------
    BarkbusError
        The first problem, naming ``source``, the path to the field and what was expected.
    """
    make = error or _scenario_error
    problems = check_value(value, where, limits)
    if problems:
        raise make(source, problems[0][0], problems[0][1])
    if dataclasses.is_dataclass(tp) and isinstance(value, dict):
        reject_unknown(value, field_names(tp), source, where, make)
    try:
        return typing.cast(T, msgspec.convert(value, tp, strict=True))
    except msgspec.ValidationError as exc:
        m = _MSG.match(str(exc))
        msg, path = (m.group("msg"), m.group("path") or "") if m else (str(exc), "")
        if m and m.group("key"):
            msg = f"invalid key: {msg[0].lower()}{msg[1:]}"
        parts = _split_path(path)
        unknown = _UNKNOWN.search(msg)
        if unknown:
            name = unknown.group("name")
            hint = did_you_mean(name, field_names(_type_at(tp, parts)))
            parts.append(name)
            msg = f"unknown field{hint}"
        choice = _CHOICE.match(msg)
        if choice:
            msg = _choice_problem(choice.group("value"), _type_at(tp, parts))
        at = _render(parts)
        full = f"{where}{'' if not at or at.startswith('[') else '.'}{at}" if where else at
        problem = msg[0].lower() + msg[1:] if msg else "invalid value"
        raise make(source, printable(full), printable(problem)) from None
