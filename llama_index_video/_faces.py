"""Package faces: a package's public names, imported from their modules on first use.

Every ``__init__.py`` of the package has one shape: a docstring saying what the package
owns and which module holds what; its public names in ``__all__``, mapped to the modules
that define them and handed out by :func:`lazy_exports`; the same names imported under
``TYPE_CHECKING`` for type checkers; no logic of its own. Importing a package then costs
nothing until a name is used, so ``import llama_index_video`` and the command line's
``--help`` stay fast, and what only reads search results never loads a speech backend.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for ``exports`` (name -> module).

    A name is imported from its module once, then kept in the package's namespace.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(exports) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
