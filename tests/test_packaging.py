"""The wheel as a user gets it: licence, links, supported Pythons, and no CUDA surprise."""

from __future__ import annotations

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
