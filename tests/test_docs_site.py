"""The documentation site's map: every page in the navigation, every public name in the
API reference, with a docstring for it and each of its methods.

``mkdocs build --strict`` (in ``scripts/test.sh``) fails on a broken link, a missing
anchor or a page left out of the navigation; these checks say which name or page is
missing without building the site.
"""

from __future__ import annotations

import inspect
import re

import llama_index_video
from tests_support import ROOT

DOCS = ROOT / "docs"
MKDOCS = (ROOT / "mkdocs.yml").read_text()
API = (DOCS / "reference" / "api.md").read_text()


def test_every_public_name_has_an_entry_in_the_api_reference():
    documented = set(re.findall(r"^::: llama_index_video\.[\w.]*?(\w+)$", API, flags=re.MULTILINE))
    documented |= set(re.findall(r"^ +- (\w+)$", API, flags=re.MULTILINE))  # listed members
    public = set(llama_index_video.__all__) - {"__version__"}
    assert public - documented == set()


def test_an_api_reference_entry_is_the_public_name_where_it_is_defined():
    for path in re.findall(r"^::: (llama_index_video\.[\w.]+)$", API, flags=re.MULTILINE):
        module, _, name = path.rpartition(".")
        if name not in llama_index_video.__all__:
            continue  # a whole module, its members listed below it
        assert getattr(llama_index_video, name) is getattr(
            __import__(module, fromlist=[name]), name
        ), path


def test_every_page_is_in_the_navigation():
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    in_nav = set(re.findall(r"^ *- (?:[^:\n]+: )?([\w/.-]+\.md)$", MKDOCS, flags=re.MULTILINE))
    assert pages - in_nav == set()
    assert in_nav - pages == set()


def undocumented(cls: type) -> list[str]:
    """The public methods ``cls`` has from this package's classes without a docstring."""
    found = []
    for owner in cls.__mro__:
        if not owner.__module__.startswith("llama_index_video"):
            continue
        for name, member in vars(owner).items():
            function = getattr(member, "__func__", member)
            public = not name.startswith("_") and inspect.isfunction(function)
            if public and not (function.__doc__ or "").strip():
                found.append(f"{owner.__name__}.{name}")
    return found


def test_every_public_name_and_its_methods_have_a_docstring():
    missing = []
    for name in sorted(set(llama_index_video.__all__) - {"__version__"}):
        value = getattr(llama_index_video, name)
        documentable = inspect.isclass(value) or inspect.isfunction(value)
        if documentable and not (value.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(value):
            missing += undocumented(value)
    assert missing == []


def test_the_readme_stays_a_short_tour():
    # The manual is the site; the README keeps what a newcomer reads first (issue 39).
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300
