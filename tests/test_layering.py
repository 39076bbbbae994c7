"""Imports follow the data flow: a module never imports one on a later floor.

Every top-level module and sub-package of the package has a floor (``FLOORS``, from the
foundation up to the command line and the service); a module may import its own floor
and the floors below. A new module or package fails here until it is given a floor.
Every import counts: at the top of a module, inside a function, or for type checking
only. A deprecated old path forwards to its new home by name (``_moved``), which
is not an import. Besides the order, no chain of imports between modules may lead back
to where it started.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "llama_index_video"
ROOT_NAME = "llama_index_video"

FLOORS: tuple[tuple[str, ...], ...] = (
    # The foundation: errors, metadata keys, result types, stored moments as plain data,
    # keys, weights, caches.
    (
        "_version",
        "_moved",
        "_faces",
        "errors",
        "schema",
        "results",
        "stored",
        "api_keys",
        "weights",
        "model_cache",
        "_gemini",
    ),
    ("media", "sources"),  # decoding files; fetching them from links
    ("transcription", "speakers", "ocr"),  # what was said, by whom, what was on screen
    ("reader",),  # files in, timed nodes out
    ("embeddings",),
    ("executor",),  # where files are read and embedded during an ingest
    ("store",),  # the index folder: vectors, manifest, lexical index, ingest
    ("chapters",),  # a recording's topical sections, made at ingest (handed to the store)
    ("postprocessing",),  # context and frames around a hit
    ("search",),  # retrieval, fusion, the gate, hits; the search policy
    ("answering",),  # answers and the LLMs that write them
    ("summaries",),  # a recording's summary: overview, decisions, action items, cited
    # VideoIndex, the facade (recordings.py: one recording's moments; querying.py: search
    # and ask; naming.py: voices; writing.py: ingest, remove, prune; verifying.py: verify;
    # watch.py: folders that keep it in step; live.py: a recording still growing)
    ("recordings", "naming", "querying", "writing", "verifying", "index", "watch", "live"),
    ("service", "cli", "agents", "mcp"),  # the front doors: HTTP, command line, agents, MCP
    ("__init__",),  # the package's public face
)
FLOOR = {unit: number for number, units in enumerate(FLOORS) for unit in units}

# Decisions stricter than the floors: these never import the named units.
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


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join([ROOT_NAME, *parts])
        yield name.removesuffix(".__init__"), path


MODULES = dict(modules())


def unit_of(module: str) -> str:
    """The floor unit of a module: its top-level module or sub-package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def own_imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports (``from x import y``: y if a module)."""
    names = imported_modules(MODULES[module].read_text(encoding="utf-8"), module)
    if MODULES[module].name == "__init__.py":  # relative imports start in the package
        names = imported_modules(MODULES[module].read_text(encoding="utf-8"), module + ".x")
    return {name for name in names if name in MODULES and name != module}


def test_every_module_has_a_floor():
    assert {unit_of(module) for module in MODULES} - set(FLOOR) == set()


def later_floor_imports(imports: dict[str, set[str]]) -> list[str]:
    """``module imports name`` for each import of a later floor."""
    return [
        f"{module} imports {name}"
        for module, names in imports.items()
        for name in sorted(names)
        if name != ROOT_NAME and FLOOR[unit_of(name)] > FLOOR[unit_of(module)]
    ]


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """Chains of imports that come back to where they started (one per back edge)."""
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for name in sorted(graph.get(module, ())):
            if state.get(name) == "open":
                cycles.append([*path[path.index(name) :], name])
            elif name not in state:
                visit(name, [*path, name])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_no_module_imports_a_later_floor():
    assert later_floor_imports({module: own_imports(module) for module in MODULES}) == []


@pytest.mark.parametrize("unit", sorted(FORBIDDEN))
def test_units_do_not_import_what_they_are_kept_from(unit):
    offenders = [
        f"{module} imports {name}"
        for module in MODULES
        if unit_of(module) == unit
        for name in own_imports(module)
        if unit_of(name) in FORBIDDEN[unit]
    ]
    assert offenders == []


def test_no_chain_of_imports_comes_back():
    graph = {m: own_imports(m) - {ROOT_NAME} for m in MODULES if m != ROOT_NAME}
    assert cycles_in(graph) == []


def test_the_rule_sees_absolute_relative_and_deferred_imports():
    source = (
        "from ..embeddings import gemini\n"
        "from . import claude\n"
        "def later():\n"
        "    import llama_index_video.embeddings.spec\n"
    )
    found = imported_modules(source, "llama_index_video.answering.engine")
    assert {
        "llama_index_video.embeddings.gemini",
        "llama_index_video.answering.claude",
        "llama_index_video.embeddings.spec",
    } <= found


def test_a_later_floor_and_a_cycle_would_be_seen():
    media, search = "llama_index_video.media.audio", "llama_index_video.search.fusion"
    assert later_floor_imports({media: {search}}) == [f"{media} imports {search}"]
    assert later_floor_imports({search: {media}}) == []
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles_in(graph) == [["a", "b", "c", "a"]]
    assert cycles_in({"a": {"b"}, "b": set()}) == []


# What the facade offers a front door about one recording (llama_index_video.recordings):
# a door that needs one of these asks VideoIndex instead of reaching past it.
FRONT_DOORS = (
    "llama_index_video.agents.tool_spec",
    "llama_index_video.mcp.server",
    "llama_index_video.cli.clip_command",
    "llama_index_video.cli.export_command",
    "llama_index_video.cli.transcript_command",
    "llama_index_video.cli.meeting_commands",
    "llama_index_video.service.clips",
)
FACADE_OFFERS = {
    f"llama_index_video.store.library.{name}"
    for name in ("resolve_source", "find_source", "check_span", "transcript", "moments_between")
} | {
    "llama_index_video.media.export.export_span",
    "llama_index_video.media.export.join_spans",
    "llama_index_video.store.manifest.Manifest",
}


@pytest.mark.parametrize("door", FRONT_DOORS)
def test_a_front_door_asks_the_facade_for_a_recordings_moments(door):
    imported = imported_modules(MODULES[door].read_text(encoding="utf-8"), door)
    assert sorted(imported & FACADE_OFFERS) == []
