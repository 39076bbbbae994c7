"""The fault-injection harness: which points it kills at, and a few real kills.

An export killed with ``SIGKILL`` while muxing (a re-encode) leaves the recording as it
was and nothing under the output's name; a ``remove`` killed between its manifest
transaction and its row deletions is finished by the next ``verify --repair``. The
whole suite, with its counts, is ``benchmarks/fault_injection.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from benchmarks.fault_injection import consistent
from benchmarks.kill_points import KILLED, chosen, cleared, cli, digest, here, write_points
from tests_support import CHECKOUT


def test_every_distinct_site_is_killed_at_its_first_call_and_the_rest_spread():
    sites = ["sqlite a:1", "sqlite a:1", "mux b:2", *["mux b:3"] * 20, "rename c:4"]
    picked = chosen(sites, budget=6)
    assert picked == sorted(set(picked)) and all(1 <= at <= len(sites) for at in picked)
    assert {sites[at - 1] for at in picked} == set(sites)
    assert [at for at in picked if at in (1, 3, 4, 24)] == [1, 3, 4, 24]
    assert len(picked) == 6
    assert chosen(sites, budget=2) == [1, 4]  # more sites than kills: spread over them


def test_an_export_killed_while_muxing_leaves_the_recording_and_no_output(
    tmp_path, script_transcriber, embed_model
):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    (tmp_path / "src").mkdir()
    source = Path(shutil.copy(CHECKOUT, tmp_path / "src"))
    index = VideoIndex(
        tmp_path / "idx",
        embed_model=embed_model,
        reader=VideoReader(
            media_dir=tmp_path / "idx" / "media", transcriber=script_transcriber, frames=None
        ),
    )
    assert index.ingest([source]).ok
    index.close()
    before = digest(source)
    argv = ["clip", source.name, "--from", "12.3", "--to", "16", "--reencode"]
    argv += ["-o", "moment.mp4", "--index", "idx"]
    sites = write_points(*argv, cwd=tmp_path)
    (tmp_path / "moment.mp4").unlink()
    muxes = [at for at, site in enumerate(sites, 1) if site.startswith("mux ")]
    assert len(muxes) > 20
    for at in (muxes[len(muxes) // 2], muxes[-1]):
        assert cli(*argv, cwd=tmp_path, kill_at=at).returncode == KILLED
        assert digest(source) == before
        assert not (tmp_path / "moment.mp4").exists()


def test_a_remove_killed_midway_is_finished_by_the_next_repair(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "boiler.md").write_text("# Boiler\n\nServiced every March by Kessler.\n")
    (tmp_path / "src" / "roof.md").write_text("# Roof\n\nThe roof drains were cleared.\n")
    assert here("ingest", "src", "--index", "idx", "--quiet", cwd=tmp_path).returncode == 0
    base = tmp_path.with_name(tmp_path.name + "-base")
    shutil.copytree(tmp_path, base)
    argv = ["remove", "src/boiler.md", "--index", "idx"]
    sites = write_points(*argv, cwd=tmp_path)
    deletes = [at for at, site in enumerate(sites, 1) if site.startswith("chroma.delete")]
    assert deletes
    shutil.copytree(base, cleared(tmp_path))
    assert cli(*argv, cwd=tmp_path, kill_at=deletes[0]).returncode == KILLED
    assert consistent(tmp_path, {"roof.md"}) is None
    listed = here("list", "--index", "idx", cwd=tmp_path).stdout
    assert "roof.md" in listed and "boiler.md" not in listed
