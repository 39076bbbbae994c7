"""Old import paths kept for one release: a module ``__getattr__`` that warns and forwards.

A public name that moves to another module stays importable from its old one until the
next release: the old module keeps only ``__getattr__ = forward(__name__, {...})``,
which imports the new home on first use and warns with a ``DeprecationWarning`` naming
it. The new home is imported by name, so an old module low in the data flow can point
at a later one without importing it (``tests/test_layering.py`` reads imports).
The moved names are listed in the CHANGELOG under "Deprecated".
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def forward(old_module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old_module``: ``homes`` maps each moved name to
    the module it lives in now, or to ``"module:new_name"`` when it was renamed too."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
        module, _, new_name = home.partition(":")
        warnings.warn(
            f"{old_module}.{name} moved to {module}.{new_name or name}; the old path will be "
            "removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(module), new_name or name)

    return __getattr__


def moved(old_module: str, home: str, *names: str) -> Callable[[str], Any]:
    """:func:`forward` for names that all moved to one ``home``."""
    return forward(old_module, dict.fromkeys(names, home))
