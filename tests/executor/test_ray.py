"""Ingest through a real two-node Ray cluster gives the rows a local ingest gives.

The cluster is a head and a second worker node of one CPU each on this machine
(``ray.cluster_utils.Cluster``), shut down after the module. Most media has subtitles,
so no speech model is involved and what is tested is the distribution; the ``speech``
tests run real speech recognition (faster-whisper tiny.en) on a file split into chunks.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import ray
from ray._private import ray_constants
from ray.cluster_utils import Cluster

from llama_index_video.cli.main import main
from llama_index_video.executor.ray import RayExecutor
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.lexical import LEXICAL_FOLDER, WORDS_FILE
from tests_support import OZONE, ROOT, stored_rows

pytestmark = [pytest.mark.ray, pytest.mark.timeout(900)]

ACTOR_AT_WORK = b"ray::_ProducerActor.produce"
KILL_WAIT_SECONDS = 300.0


@pytest.fixture(scope="module")
def cluster():
    # Without the dashboard's modules, the log monitor (logs are not sent to the driver)
    # and the autoscaler's monitor, which cost CPU the other test workers need.
    # Workers at the niceness of the other test processes, not Ray's default 15: at load
    # 30 on 2 cores a nice-15 actor got a 30th of the CPU the others got, and a test
    # transcribing on actors ran past its 900 s timeout.
    head = {
        "num_cpus": 1,
        "include_dashboard": False,
        "include_log_monitor": False,
        "_system_config": {"worker_niceness": 0},
    }
    cluster = Cluster(initialize_head=True, head_node_args={**head, "no_monitor": True})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(timeout=120)
        ray.init(address=cluster.address, log_to_driver=False)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture
def media(subtitled_media):
    (subtitled_media / "broken.mp4").write_bytes(b"not a video at all")
    return subtitled_media


def _ingest(folder: Path, media: Path, embed_model, executor=None, **reader_options):
    reader = VideoReader(media_dir=folder / "media", ocr="off", **reader_options)
    index = VideoIndex(folder, embed_model=embed_model, reader=reader)
    try:
        report = index.ingest([media], executor=executor)
        return report, stored_rows(index.vector_store, folder)
    finally:
        index.close()


def _outcomes(report):
    return [(f.path.name, f.outcome, f.reason, f.node_count) for f in report.files]


def _frames(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "media").rglob("*.jpg"))}


def _assert_same_rows(got, want):
    assert want and sorted(got) == sorted(want)
    for row_id, (document, metadata, vector) in want.items():
        assert got[row_id][:2] == (document, metadata), row_id
        assert max(abs(a - b) for a, b in zip(got[row_id][2], vector, strict=True)) < 1e-5


def _referenced_frames(rows) -> set[str]:
    return {Path(m["image_path"]).name for _, m, _ in rows.values() if m.get("image_path")}


def test_ray_ingest_writes_the_rows_a_local_ingest_writes(tmp_path, cluster, media, embed_model):
    local_report, local_rows = _ingest(tmp_path / "local", media, embed_model)
    report, rows = _ingest(tmp_path / "ray", media, embed_model, RayExecutor(workers=2))
    assert _outcomes(report) == _outcomes(local_report)
    assert [f.outcome for f in report.files] == ["failed", "indexed", "indexed"]
    _assert_same_rows(rows, local_rows)
    assert _frames(tmp_path / "ray") == _frames(tmp_path / "local")
    assert _words(tmp_path / "ray") == _words(tmp_path / "local") != set()
    # The failure is recorded and retried by the next run, as locally; the rest is skipped.
    again, _ = _ingest(tmp_path / "ray", media, embed_model, RayExecutor(workers=2))
    assert [f.outcome for f in again.files] == ["failed", "skipped", "skipped"]


def _words(folder: Path) -> set[tuple[str, str]]:
    """The lexical index's rows: node id and words (written by the driver, as rows are)."""
    with sqlite3.connect(folder / LEXICAL_FOLDER / WORDS_FILE) as db:
        return set(db.execute("SELECT node_id, words FROM words"))


@contextmanager
def _killing(cluster: Cluster, at_work: bytes) -> Iterator[list[int]]:
    """While the block runs, SIGKILL the first of ``cluster``'s actors seen at
    ``at_work``; yields the pids."""
    stop = threading.Event()
    killed: list[int] = []
    raylets = {
        info.process.pid
        for node in cluster.list_all_nodes()
        for info in node.all_processes[ray_constants.PROCESS_TYPE_RAYLET]
    }
    killer = threading.Thread(
        target=lambda: killed.extend(_kill_a_busy_actor(stop, at_work, raylets))
    )
    killer.start()
    try:
        yield killed
    finally:
        stop.set()
        killer.join(timeout=30)


def _kill_a_busy_actor(stop: threading.Event, at_work: bytes, raylets: set[int]) -> list[int]:
    """SIGKILL the first actor process seen at ``at_work`` that one of ``raylets``
    started (another test session's cluster on the machine runs actors with the same
    command line); returns the pids killed."""
    deadline = time.monotonic() + KILL_WAIT_SECONDS
    while not stop.is_set() and time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            try:
                busy = entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(at_work)
                ours = busy and _parent(int(entry.name)) in raylets
            except OSError:
                continue
            if ours:
                os.kill(int(entry.name), signal.SIGKILL)
                return [int(entry.name)]
        time.sleep(0.02)
    return []


def _parent(pid: int) -> int:
    """The parent pid of ``pid`` (a raylet starts its workers itself)."""
    # The command name in field 2 may hold spaces and parentheses: split after the last ")".
    return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])


@contextmanager
def _decoy(at_work: bytes) -> Iterator[subprocess.Popen[bytes]]:
    """A process outside the cluster whose command line reads ``at_work``, as another
    session's actor does; the test ends it."""
    decoy = subprocess.Popen(["bash", "-c", f'exec -a "{at_work.decode()}" sleep 600'])
    try:
        deadline = time.monotonic() + 10.0
        cmdline = Path("/proc") / str(decoy.pid) / "cmdline"
        while not cmdline.read_bytes().startswith(at_work) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cmdline.read_bytes().startswith(at_work)
        yield decoy
    finally:
        decoy.kill()
        decoy.wait(timeout=30)


def test_a_worker_killed_mid_file_is_retried_without_duplicates_or_orphans(
    tmp_path, cluster, subtitled_media, embed_model
):
    _, local_rows = _ingest(tmp_path / "local", subtitled_media, embed_model)
    with _decoy(ACTOR_AT_WORK) as decoy, _killing(cluster, ACTOR_AT_WORK) as killed:
        report, rows = _ingest(tmp_path / "ray", subtitled_media, embed_model, RayExecutor())
        assert decoy.poll() is None, "a process outside the cluster was killed"
    assert killed and killed != [decoy.pid], "no actor was seen at work"
    assert report.ok, report
    _assert_same_rows(rows, local_rows)
    assert len(rows) == sum(f.node_count for f in report.files)
    assert set(_frames(tmp_path / "ray")) == _referenced_frames(rows)


@pytest.fixture(scope="module")
def speech(tmp_path_factory, transcriber, embed_model):
    """An 80 s video without subtitles, read in 30 s chunks, each prompted by a 5 s
    lead-in (the end of the chunk before, sent with it: it changes what is written, and
    costs less speech recognition than a longer one), and its local ingest's rows."""
    folder = tmp_path_factory.mktemp("speech")
    (folder / "input").mkdir()
    shutil.copy(OZONE, folder / "input" / OZONE.name)
    options = {
        "transcriber": transcriber,
        "audio_chunk_seconds": 30.0,
        "audio_lead_in_seconds": 5.0,
    }
    report, rows = _ingest(folder / "local", folder / "input", embed_model, **options)
    assert report.ok, report
    return folder / "input", options, rows, _frames(folder / "local")


def _chunk_logs(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "chunks transcribed on" in r.getMessage()]


def test_a_long_recording_is_transcribed_chunk_by_chunk_on_both_workers(
    tmp_path, cluster, speech, embed_model, caplog, probes
):
    """Real speech recognition on one file split in chunks: the rows of a local ingest."""
    media, options, local_rows, local_frames = speech
    with caplog.at_level(logging.INFO, logger="llama_index_video.executor.ray"):
        report, rows = _ingest(tmp_path, media, embed_model, RayExecutor(workers=2), **options)
    assert report.ok, report
    assert probes == {OZONE.name: 1}  # by the driver, which counts actors and cuts chunks
    _assert_same_rows(rows, local_rows)
    assert _frames(tmp_path) == local_frames
    assert any(m["modality"] == "transcript" for _, m, _ in rows.values())
    # One file, yet both workers transcribed some of its 3-4 chunks.
    assert [message.split(": ")[-1] for message in _chunk_logs(caplog)] in (
        ["3 chunks transcribed on 2 worker(s)"],
        ["4 chunks transcribed on 2 worker(s)"],
    ), _chunk_logs(caplog)


def test_a_worker_killed_mid_chunk_is_retried_without_duplicates_or_orphans(
    tmp_path, cluster, speech, embed_model, caplog
):
    media, options, local_rows, local_frames = speech
    with (
        _killing(cluster, b"ray::_ProducerActor.recognise") as killed,
        caplog.at_level(logging.INFO, logger="llama_index_video.executor.ray"),
    ):
        report, rows = _ingest(tmp_path, media, embed_model, RayExecutor(workers=2), **options)
    assert killed, "no actor was seen transcribing a chunk"
    assert report.ok, report
    _assert_same_rows(rows, local_rows)
    assert _frames(tmp_path) == local_frames
    assert len(_chunk_logs(caplog)) == 1, _chunk_logs(caplog)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run(
        [sys.executable, "-m", "llama_index_video.cli.main", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def test_the_command_line_ingests_through_the_cluster(tmp_path, cluster, media, capsys):
    """``ingest --ray ADDRESS`` in its own process (this one has joined the cluster
    already): the report and rows of a local ingest, run in this process."""
    common = [str(media), "--ocr", "off", "--quiet"]
    local_code = main(["ingest", *common, "--index", str(tmp_path / "local")])
    local = capsys.readouterr().out
    remote = _cli("ingest", *common, "--index", str(tmp_path / "ray"), "--ray", cluster.address)
    assert remote.returncode == local_code == 1, remote.stderr  # broken.mp4 fails
    assert "Traceback" not in remote.stdout + remote.stderr
    report = remote.stdout.replace(str(tmp_path / "ray"), "<index>")
    assert report == local.replace(str(tmp_path / "local"), "<index>")
    assert "broken.mp4" in report and "2 indexed, 0 skipped, 1 failed" in report

    def rows(folder: Path):
        index = VideoIndex(folder)
        try:
            return stored_rows(index.vector_store, folder)
        finally:
            index.close()

    _assert_same_rows(rows(tmp_path / "ray"), rows(tmp_path / "local"))
    assert _frames(tmp_path / "ray") == _frames(tmp_path / "local")
