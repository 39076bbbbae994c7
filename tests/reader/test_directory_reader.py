"""``VideoReader`` inside LlamaIndex's ``SimpleDirectoryReader``, as a third-party app uses it."""

from __future__ import annotations

import json
import shutil

import pytest
from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.schema import MetadataMode

from llama_index_video import schema
from llama_index_video.embeddings.local import local_embedding
from llama_index_video.errors import MediaError, VideoIndexError
from llama_index_video.reader.video_reader import VideoReader
from tests_support import LIBRIVOX, OZONE, SUBTITLES


@pytest.fixture
def talks(tmp_path):
    """A folder with the ozone video and its subtitles (no speech recognition needed)."""
    folder = tmp_path / "talks"
    folder.mkdir()
    shutil.copy(OZONE, folder / OZONE.name)
    shutil.copy(SUBTITLES / "ozone_explainer.srt", folder / "ozone_explainer.srt")
    return folder


@pytest.fixture
def reader(tmp_path):
    return VideoReader(media_dir=tmp_path / "media", frames=None, ocr="off")


def test_file_metadata_reaches_every_node_flat_and_unembedded(talks, reader):
    def file_metadata(path):
        return {"course": "Atmosphere 101", "tags": ["ozone", "uv"], "file_name": "mine.mp4"}

    nodes = SimpleDirectoryReader(
        str(talks),
        required_exts=[".mp4"],
        file_extractor={".mp4": reader},
        file_metadata=file_metadata,
    ).load_data()
    assert nodes
    for node in nodes:
        assert node.metadata["course"] == "Atmosphere 101"
        assert json.loads(node.metadata["tags"]) == ["ozone", "uv"]  # kept flat
        assert node.metadata[schema.FILE_NAME] == OZONE.name  # the reader's own keys win
        assert "Atmosphere 101" not in node.get_content(MetadataMode.EMBED)
    assert [n.node_id for n in nodes] == [n.node_id for n in reader.load_data(talks / OZONE.name)]


def test_default_file_metadata_is_kept_too(talks, reader):
    nodes = SimpleDirectoryReader(
        str(talks), required_exts=[".mp4"], file_extractor={".mp4": reader}
    ).load_data()
    assert nodes and all(n.metadata["file_path"] == str(talks / OZONE.name) for n in nodes)
    assert all(n.metadata["file_size"] == OZONE.stat().st_size for n in nodes)


def test_a_bad_file_reaches_raise_on_error(tmp_path, reader):
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"\x00" * 1000)
    strict = SimpleDirectoryReader(
        input_files=[str(bad)], file_extractor={".mp4": reader}, raise_on_error=True
    )
    with pytest.raises(Exception, match="Error loading file") as raised:
        strict.load_data()
    assert isinstance(raised.value.__cause__, MediaError)
    assert str(bad) in str(raised.value.__cause__)
    lenient = SimpleDirectoryReader(input_files=[str(bad)], file_extractor={".mp4": reader})
    assert lenient.load_data() == []


def test_unknown_arguments_are_refused_not_dropped(talks, reader):
    with pytest.raises(TypeError):
        reader.load_data(talks / OZONE.name, extra_info={}, show_progress=True)


def test_a_remote_file_system_is_refused_with_a_clear_error(talks, reader):
    from fsspec.implementations.memory import MemoryFileSystem

    with pytest.raises(VideoIndexError, match="local files only"):
        reader.load_data(talks / OZONE.name, fs=MemoryFileSystem())


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("Was John Dashwood a bad young man?", 1),
        ("Is selfishness a bad disposition?", 2),
        ("What would marrying a kinder woman have done for him?", 3),
    ],
)
def test_human_speech_finds_its_moment_in_a_vector_store_index(tmp_path, question, sentence):
    pytest.importorskip("faster_whisper", reason="the [local] extra is not installed")
    folder = tmp_path / "readings"
    folder.mkdir()
    shutil.copy(LIBRIVOX, folder / LIBRIVOX.name)
    reader = VideoReader(media_dir=tmp_path / "media")
    nodes = SimpleDirectoryReader(str(folder), file_extractor={".flac": reader}).load_data()
    index = VectorStoreIndex(nodes, embed_model=local_embedding())
    hit = index.as_retriever(similarity_top_k=1).retrieve(question)[0].node
    said = json.loads(LIBRIVOX.with_suffix(".json").read_text())["sentences"][sentence]
    assert hit.metadata[schema.FILE_NAME] == LIBRIVOX.name
    assert hit.metadata[schema.START_S] <= said["start"] + 1.0
    assert hit.metadata[schema.END_S] >= said["end"] - 1.0
