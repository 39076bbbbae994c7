"""A recording transcribed chunk by chunk, anywhere, reads as a plain read does.

``speech_chunks`` + ``transcribe_chunk`` + ``read(speech=...)`` is how a Ray ingest spreads
a long file over workers (issue 14); with real speech recognition the nodes must be those
of a plain read, which transcribes the same chunks one after another.
"""

from __future__ import annotations

import itertools
import shutil

import pytest

from llama_index_video.media.audio import SAMPLE_RATE
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.base import Speech
from tests_support import HANDBOOK, OZONE, OZONE_SRT, RememberingTranscriber

CHUNK_SECONDS = 30.0  # the ozone video (80 s) becomes 3-4 chunks, cut at quiet moments


def _rows(result):
    return [(node.node_id, node.get_content(), node.metadata) for node in result.nodes]


def test_speech_heard_chunk_by_chunk_gives_the_nodes_of_a_plain_read(tmp_path, transcriber):
    reader = VideoReader(
        media_dir=tmp_path / "media",
        transcriber=RememberingTranscriber(transcriber),  # the plain read hears no chunk again
        ocr="off",
        audio_chunk_seconds=CHUNK_SECONDS,
    )
    chunks = reader.speech_chunks(OZONE)
    assert chunks is not None
    chunks = list(chunks)
    assert len(chunks) in (3, 4)
    assert chunks[0].start == 0.0
    for before, after in itertools.pairwise(chunks):
        assert after.start == pytest.approx(before.end)  # nothing lost, nothing twice
    assert chunks[-1].end == pytest.approx(80.0, abs=0.05)
    assert all(len(chunk.samples) <= CHUNK_SECONDS * SAMPLE_RATE for chunk in chunks)
    assert not any(len(chunk.lead_in) for chunk in chunks)  # no lead-in unless asked

    # Chunks may be heard in any order (on any worker): each is timed on the source.
    heard = {
        i: reader.transcribe_chunk(chunks[i], source=OZONE) for i in reversed(range(len(chunks)))
    }
    for i, part in heard.items():
        assert part.language == "en"
        for segment in part.segments:
            assert chunks[i].start <= segment.start <= segment.end <= chunks[i].end
    speech = Speech.joined(heard[i] for i in range(len(chunks)))
    starts = [segment.start for segment in speech.segments]
    assert starts == sorted(starts) and len(starts) >= 3

    plain = reader.read(OZONE)
    from_chunks = reader.read(OZONE, speech=speech)
    assert _rows(from_chunks) == _rows(plain)
    assert any(node.metadata["modality"] == "frame" for node in plain.nodes)


def test_files_read_in_one_chunk_or_without_speech_recognition_are_not_split(tmp_path, transcriber):
    reader = VideoReader(
        media_dir=tmp_path / "media", transcriber=transcriber, audio_chunk_seconds=CHUNK_SECONDS
    )
    subtitled = tmp_path / "subtitled"
    subtitled.mkdir()
    shutil.copy(OZONE, subtitled / OZONE.name)
    shutil.copy(OZONE_SRT, subtitled / OZONE_SRT.name)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all")
    assert VideoReader(media_dir=tmp_path / "media").speech_chunks(OZONE) is None  # 80 s < 600 s
    assert reader.speech_chunks(subtitled / OZONE.name) is None
    assert reader.speech_chunks(HANDBOOK) is None
    assert reader.speech_chunks(broken) is None
    assert reader.speech_chunks(tmp_path / "missing.mp4") is None
    with_subtitles_ignored = VideoReader(
        media_dir=tmp_path / "media", use_subtitles=False, audio_chunk_seconds=CHUNK_SECONDS
    )
    assert with_subtitles_ignored.speech_chunks(subtitled / OZONE.name) is not None


def test_joined_speech_keeps_chunk_order_and_the_first_language_heard():
    from llama_index_video.transcription.base import Segment

    first = Speech((Segment(0.0, 1.0, "a"),), None)
    second = Speech((Segment(30.0, 31.0, "b"), Segment(32.0, 33.0, "c")), "en")
    third = Speech((), "de")
    joined = Speech.joined([first, second, third])
    assert [s.text for s in joined.segments] == ["a", "b", "c"]
    assert joined.language == "en"
    assert Speech.joined([]) == Speech()


SEAM_GAP = 0.3  # seconds of silence between sentences: each chunk is cut in one of them


@pytest.fixture(scope="module")
def sentences_at_seams(tmp_path_factory):
    """The narration's ten sentences, then the last six in reverse order, joined with 0.3 s
    gaps (silent), as a WAV of 74 s: wherever a chunk is cut, speech ends just before the
    seam and starts just after it. Returns the file and each sentence's (start, end)."""
    import json
    import wave

    import numpy as np

    from llama_index_video.media.audio import decode_audio

    speech = OZONE.parents[2] / "tests" / "fixtures" / "speech"
    audio = decode_audio(speech / "narration_en.ogg")
    gap = np.zeros(round(SEAM_GAP * SAMPLE_RATE), np.float32)
    parts, spans, at = [], [], 0.0
    sentences = json.loads((speech / "narration_en.json").read_text())["sentences"]
    for sentence in [*sentences, *reversed(sentences[4:])]:
        piece = audio[round(sentence["start"] * SAMPLE_RATE) : round(sentence["end"] * SAMPLE_RATE)]
        parts += [piece, gap]
        spans.append((at, at + len(piece) / SAMPLE_RATE))
        at += (len(piece) + len(gap)) / SAMPLE_RATE
    path = tmp_path_factory.mktemp("seams") / "seams.wav"
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(SAMPLE_RATE)
        samples = np.clip(np.concatenate(parts), -1, 1)
        handle.writeframes((samples * 32767).astype("<i2").tobytes())
    return path, spans


def test_a_chunk_hears_the_speech_before_its_seam_for_its_prompt_and_writes_none_of_it(
    tmp_path, transcriber, sentences_at_seams, monkeypatch
):
    """Chunks cut between sentences spoken 0.3 s apart: each chunk after the first
    carries the end of the one before (its lead-in) and its first window is prompted with
    what is said there, yet writes only its own speech; no sentence is lost or written
    twice at a seam, and chunks heard apart, in any order, give the rows of a plain read."""
    import numpy as np

    path, spans = sentences_at_seams
    lead_in = 20.0  # less than a chunk, so it is cut from the chunk before
    reader = VideoReader(
        media_dir=tmp_path / "media",
        transcriber=RememberingTranscriber(transcriber),  # the plain read hears no chunk again
        audio_chunk_seconds=30.0,
        audio_lead_in_seconds=lead_in,
    )
    chunks = list(reader.speech_chunks(path) or ())
    assert len(chunks) >= 3
    assert len(chunks[0].lead_in) == 0
    for before, after in itertools.pairwise(chunks):
        assert after.start == pytest.approx(before.end)
        lead = min(len(before.samples), round(lead_in * SAMPLE_RATE))
        assert np.array_equal(after.lead_in, before.samples[-lead:])
    seams = [chunk.start for chunk in chunks[1:]]
    assert all(any(0 < seam - end <= SEAM_GAP for _, end in spans) for seam in seams)

    whisper = transcriber._load(transcriber.model)[1]
    original = whisper.transcribe
    prompts: list[str | None] = []

    def transcribe(audio, **options):
        if not options["vad_filter"]:  # a decoding pass, not a piece decoded again
            prompts.append(options["initial_prompt"])
        return original(audio, **options)

    monkeypatch.setattr(whisper, "transcribe", transcribe)
    heard = {}
    for i in reversed(range(len(chunks))):
        prompts.clear()
        heard[i] = reader.transcribe_chunk(chunks[i], source=path)
        if i > 0:  # the lead-in decoded first, unprompted; then the chunk, prompted by it
            assert prompts[0] is None and prompts[1], prompts
        for segment in heard[i].segments:
            assert chunks[i].start <= segment.start <= segment.end <= chunks[i].end
    monkeypatch.undo()
    speech = Speech.joined(heard[i] for i in range(len(chunks)))

    segments = speech.segments
    words = [word for segment in segments for word in segment.words]
    for start, end in spans:  # every sentence heard, where it was said
        assert any(s.start < end and s.end > start for s in segments), (start, end)
        assert min(abs(w.start - start) for w in words) <= 1.0, (start, end)
    for one, two in itertools.pairwise(words):  # nothing written twice
        assert two.start >= one.end - 0.1, (one, two)
    assert _rows(reader.read(path, speech=speech)) == _rows(reader.read(path))
