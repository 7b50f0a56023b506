"""Which files untrusted input (OSC, a port, a capture) may make barkbus open.

A :class:`PathPolicy` holds allowed root folders: the install roots (barkbus's bundled demo
installs and the game installs in use), the scenario's folder, and folders the user adds
(``barkbus live --allow DIR``). A path is allowed when, with ``..`` and every symbolic link
resolved, it lies inside one of the (equally resolved) roots; anything else raises
:class:`PathRefused` and is counted. A relative path is taken relative to the policy's
``base`` (the scenario's folder, else the first root), and the resolved absolute path is
what gets opened, so a capture records where the file really was.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

from audio.core.errors import BarkbusError

__all__ = ["MAX_PATH", "PathPolicy", "PathRefused", "bundled_roots"]

MAX_PATH = 4096
"""Longest path accepted (characters)."""
_PACKAGE = Path(__file__).resolve().parents[1]


class PathRefused(BarkbusError, ValueError):
    """A file outside the allowed roots (or not a usable path) was asked for."""

    def __init__(self, path: str, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"file refused: {path[:200]!r}: {reason}")


def bundled_roots() -> list[Path]:
    """barkbus's own data folders: every game's ``demo`` install and the offline demos."""
    roots = sorted(p for p in (_PACKAGE / "games").glob("*/demo") if p.is_dir())
    roots.append(_PACKAGE / "offline" / "demo")
    return roots


def _resolve(p: str | os.PathLike[str]) -> Path:
    return Path(p).expanduser().resolve(strict=False)


class PathPolicy:
    """Allowed roots for files named by untrusted input; thread-safe counters."""

    def __init__(
        self,
        roots: Iterable[str | os.PathLike[str]] = (),
        *,
        base: str | os.PathLike[str] | None = None,
        bundled: bool = True,
    ) -> None:
        self.roots: list[Path] = []
        self.refused = 0
        self.allowed = 0
        self._lock = threading.Lock()
        for r in [*(bundled_roots() if bundled else []), *roots]:
            self.add(r)
        self.base = _resolve(base) if base is not None else (self.roots[0] if self.roots else None)

    def add(self, root: str | os.PathLike[str]) -> None:
        """Allow everything under ``root`` (resolved now; a missing folder is allowed too)."""
        r = _resolve(root)
        if r not in self.roots:
            self.roots.append(r)

    def check(self, path: str | os.PathLike[str]) -> Path:
        """The resolved absolute path if it lies under an allowed root; else :class:`PathRefused`."""
        text = os.fspath(path)
        try:
            where = self._locate(text)
        except PathRefused:
            with self._lock:
                self.refused += 1
            raise
        with self._lock:
            self.allowed += 1
        return where

    def allows(self, path: str | os.PathLike[str]) -> bool:
        """True if :meth:`check` would accept ``path`` (not counted)."""
        try:
            self._locate(os.fspath(path))
        except PathRefused:
            return False
        return True

    def _locate(self, text: str) -> Path:
        if not isinstance(text, str) or not text or len(text) > MAX_PATH or "\x00" in text:
            raise PathRefused(str(text), f"not a path of 1..{MAX_PATH} characters without NUL")
        p = Path(text).expanduser()
        if not p.is_absolute():
            if self.base is None:
                raise PathRefused(text, "a relative path and no base folder")
            p = self.base / p
        try:
            real = p.resolve(strict=False)
        except (OSError, RuntimeError, ValueError) as exc:  # symlink loops, bad names
            raise PathRefused(text, f"cannot resolve: {exc}") from None
        for root in self.roots:
            if real == root or real.is_relative_to(root):
                return real
        roots = ", ".join(str(r) for r in self.roots) or "none"
        raise PathRefused(text, f"outside the allowed folders ({roots}); add one with --allow DIR")

    def to_json(self) -> list[str]:
        """The roots as strings (for a capture header)."""
        return [str(r) for r in self.roots]
