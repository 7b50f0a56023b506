"""The exception types barkbus raises: one root, one subclass per cause.

=====================  ===========================================================  =========
error                  cause                                                        CLI exit
=====================  ===========================================================  =========
:class:`InputError`    bad input a user can fix (an argument, a value, a file name)  2
:class:`FormatError`   a binary file is truncated, corrupt or of another format      2
:class:`ScenarioError` a scenario, capture or other text file is wrong               2
:class:`GraphError`    a DSP graph file is wrong                                      2
:class:`OutputError`   an output cannot be written (missing folder, no permission)    2
:class:`RunFailure`    a failure at run time (no audio device, voice budget, faults)  1
=====================  ===========================================================  =========

Every parser raises :class:`FormatError` for bad input: it names the file, the byte
offset and what was expected there, so a user can report a real file's layout.
"""

from __future__ import annotations

from os import PathLike

__all__ = [
    "BarkbusError",
    "FormatError",
    "GraphError",
    "InputError",
    "OutputError",
    "RunFailure",
    "ScenarioError",
    "UnsupportedError",
]


class BarkbusError(Exception):
    """Base class of every error barkbus raises on purpose."""

    exit_status = 2
    """The command line's exit status for this error (2: bad input, 1: run-time failure)."""


class InputError(BarkbusError, ValueError):
    """Bad input a user can fix: an argument, a value out of range, an unknown name."""


class OutputError(BarkbusError, OSError):
    """An output cannot be written: names the path and why (checked before rendering)."""


class RunFailure(BarkbusError, RuntimeError):
    """A failure at run time rather than bad input: no audio device, a voice budget, faults."""

    exit_status = 1


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

    def __init__(
        self, path: str | PathLike[str] | None, offset: int | None, expected: str, found: object = None
    ) -> None:
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
