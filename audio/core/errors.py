"""The exception types barkbus raises.

Every parser raises :class:`FormatError` for bad input: it names the file, the byte
offset and what was expected there, so a user can report a real file's layout.
"""
from __future__ import annotations

from os import PathLike

__all__ = ["BarkbusError", "FormatError", "GraphError", "ScenarioError", "UnsupportedError"]


class BarkbusError(Exception):
    """Base class of every error barkbus raises on purpose."""


class FormatError(BarkbusError, ValueError):
    """A file (or buffer) is truncated, corrupt or not of the expected format.

    Parameters
    ----------
    path:
        The file, or a description of the buffer (``"pak+inner"`` style paths are fine).
    offset:
        Byte offset in that file where the problem was found (``None`` if not known).
    expected:
        What should have been there, in words.
    found:
        What was there instead (optional).
    """

    def __init__(self, path: str | PathLike[str] | None, offset: int | None, expected: str,
                 found: object = None) -> None:
        self.path = str(path) if path is not None else "<buffer>"
        self.offset = offset
        self.expected = expected
        self.found = found
        where = self.path if offset is None else f"{self.path} at offset {offset} (0x{offset:X})"
        msg = f"{where}: expected {expected}"
        if found is not None:
            msg += f", found {found!r}"
        super().__init__(msg)


class UnsupportedError(FormatError):
    """Well-formed input that uses a feature barkbus does not implement (e.g. a codec id)."""


class GraphError(BarkbusError, ValueError):
    """A DSP graph file is wrong: names the file, the node and the field."""

    def __init__(self, path: str, node: str | None, field: str | None, problem: str) -> None:
        self.path, self.node, self.field, self.problem = path, node, field, problem
        parts = [path]
        if node is not None:
            parts.append(f"node {node!r}")
        if field is not None:
            parts.append(f"field {field!r}")
        super().__init__(": ".join([", ".join(parts), problem]))


class ScenarioError(BarkbusError, ValueError):
    """A scenario file is wrong: names the file, the entry and the problem."""

    def __init__(self, path: str, where: str | None, problem: str) -> None:
        self.path, self.where, self.problem = path, where, problem
        loc = path if where is None else f"{path}: {where}"
        super().__init__(f"{loc}: {problem}")
