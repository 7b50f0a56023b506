"""Package names imported on first use (PEP 562), so importing a package stays light.

A package keeps a table of its exported names and the module each comes from, and sets its
module-level ``__getattr__`` and ``__dir__`` from :func:`lazy_exports`::

    _EXPORTS = {"VoicePort": "audio.port.api", ...}
    __all__ = list(_EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose names are imported on first use.

    Parameters
    ----------
    package:
        The package's name (``__name__``), for the error of an unknown attribute.
    namespace:
        The package's ``globals()``: a name, once imported, is stored there (later lookups
        do not call ``__getattr__`` again); its ``__all__`` is what ``dir()`` lists.
    exports:
        Exported name -> the module it is imported from.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(namespace.get("__all__", exports))

    return __getattr__, __dir__
