"""The wheel as a user gets it: licence, links, supported Pythons, and no CUDA surprise."""

from __future__ import annotations

import re
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from hatchling.builders.wheel import WheelBuilder

from tests_support import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    (built,) = WheelBuilder(str(ROOT)).build(directory=str(out), versions=["standard"])
    return zipfile.ZipFile(built)


@pytest.fixture(scope="module")
def metadata(wheel):
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    return Parser().parsestr(wheel.read(name).decode())


def test_the_mit_licence_ships_in_the_wheel(wheel, metadata):
    licence = next(n for n in wheel.namelist() if n.endswith("/LICENSE"))
    assert ".dist-info/licenses/" in licence
    assert wheel.read(licence).decode().startswith("MIT License")
    assert metadata["License-Expression"] == "MIT"


def test_project_links(metadata):
    links = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
    assert set(links) >= {"Homepage", "Repository", "Issues", "Changelog", "Documentation"}
    assert all(link.startswith("https://") for link in links.values())


def test_the_readme_on_pypi_links_into_the_repository(metadata):
    """PyPI shows the README without the repository around it: every link is absolute
    there, and each one into the repository names a file or folder it holds."""
    links = re.findall(r"\]\(([^)\s]+)\)", metadata.get_payload())
    assert len(links) > 20
    assert all(link.startswith(("https://", "http://", "#")) for link in links)
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL"))
    files = urls["Repository"] + "/blob/main/"
    inside = [link.removeprefix(files) for link in links if link.startswith(files)]
    assert len(inside) > 20 and all((ROOT / link.split("#")[0]).exists() for link in inside)


def test_supported_python_versions_are_declared(metadata):
    classifiers = set(metadata.get_all("Classifier"))
    for minor in (10, 11, 12, 13):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    assert metadata["Requires-Python"] == ">=3.10"


def test_no_extra_asks_for_torch_itself(metadata):
    # An unpinned 'torch' from PyPI is the CUDA build; the README installs the CPU one first.
    wanted = [r for r in metadata.get_all("Requires-Dist") if r.split()[0].startswith("torch")]
    assert wanted == []
    assert "pip install torch==2.13.0" in Path(ROOT / "README.md").read_text()


def test_all_is_every_extra_the_readme_lists_but_qdrant(metadata):
    readme = Path(ROOT / "README.md").read_text()
    listed = set(re.findall(r"^\| `([a-z-]+)` \| ", readme, flags=re.MULTILINE))
    assert {"local", "serve", "speakers", "web", "all", "qdrant"} <= listed
    assert "| `all` | all of the above except `qdrant` |" in readme
    # The wheel spells each extra out: requirement -> the extras that ask for it.
    wanted: dict[str, set[str]] = {}
    for line in metadata.get_all("Requires-Dist"):
        extra = re.search(r"extra == '([a-z-]+)'", line)
        if extra:
            requirement = line.replace(extra.group(0), "extra")
            wanted.setdefault(extra.group(1), set()).add(requirement)
    parts = listed - {"all", "qdrant"}
    assert parts <= set(wanted)
    assert wanted["all"] == set().union(*(wanted[name] for name in parts))
