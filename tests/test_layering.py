"""Imports follow the data flow: a layer never imports one that comes after it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "llama_index_video"

# Sub-packages that must not import the named others.
FORBIDDEN = {
    "answering": ("embeddings",),
    "_gemini": ("embeddings", "answering", "store", "index", "cli", "service"),
}


def imported_modules(source: str, module: str) -> set[str]:
    """Every module ``source`` (the code of ``module``) imports, relative imports resolved."""
    package = module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join([*base, *([node.module] if node.module else [])])
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_do_not_import_later_ones(layer):
    offenders = []
    for path in sorted((PACKAGE / layer).glob("*.py")):
        module = f"llama_index_video.{layer}.{path.stem}"
        for name in imported_modules(path.read_text(encoding="utf-8"), module):
            for later in FORBIDDEN[layer]:
                prefix = f"llama_index_video.{later}"
                if name == prefix or name.startswith(prefix + "."):
                    offenders.append(f"{path.name} imports {name}")
    assert offenders == []


def test_the_rule_sees_absolute_relative_and_deferred_imports():
    source = (
        "from ..embeddings import gemini\n"
        "from . import claude\n"
        "def later():\n"
        "    import llama_index_video.embeddings.spec\n"
    )
    found = imported_modules(source, "llama_index_video.answering.answerer")
    assert {
        "llama_index_video.embeddings.gemini",
        "llama_index_video.answering.claude",
        "llama_index_video.embeddings.spec",
    } <= found
