"""Citations built from retrieved nodes, and answers' labels checked against them."""

from __future__ import annotations

import random

import pytest
from llama_index.core.schema import ImageNode, TextNode

from llama_index_video.answering.citations import (
    CheckedAnswer,
    check_citations,
    parse_timestamp,
)
from llama_index_video.results import Citation
from llama_index_video.schema import format_timestamp, moment_label


def moment(file: str, start: float | None, end: float | None = None, **extra: str) -> Citation:
    return Citation(
        source=f"/media/{file}",
        file_name=file,
        start=start,
        end=end,
        label=moment_label(file, start, end),
        url=f"/media/{file}" if start is None else f"/media/{file}#t={start:.1f}",
        frame_path=extra.get("frame_path"),
        modality=extra.get("modality", "text" if start is None else "transcript"),
    )


TALK = moment("talk.mp4", 94.9, 101.2)  # [talk.mp4 01:34-01:41]
FRAME = moment("talk.mp4", 130.0, frame_path="/idx/f130.jpg", modality="frame")  # [talk.mp4 02:10]
LATE = moment("talk.mp4", 3723.0, 3730.5)  # [talk.mp4 1:02:03-1:02:10]
NOTES = moment("notes.md", None)  # [notes.md]
DEMO = moment("demo.mov", 10.0, 20.0)  # [demo.mov 00:10-00:20]
RETRIEVED = (TALK, FRAME, LATE, NOTES, DEMO)


def check(answer: str, retrieved: tuple[Citation, ...] = RETRIEVED, **options) -> CheckedAnswer:
    return check_citations(answer, retrieved, **options)


# -- Citation.from_node -------------------------------------------------------------------


def test_citation_from_a_transcript_node_keeps_its_metadata(talk_transcript):
    assert Citation.from_node(talk_transcript) == Citation(
        source="/media/talk.mp4",
        file_name="talk.mp4",
        start=94.9,
        end=101.2,
        label="[talk.mp4 01:34-01:41]",
        url="/media/talk.mp4#t=94.9",
        frame_path=None,
        modality="transcript",
    )


def test_citation_from_a_bare_frame_node_derives_label_link_and_path():
    node = ImageNode(
        image_path="/idx/frames/f130.jpg",
        metadata={"source": "/media/talk.mp4", "frame_time": 130.0},
    )
    citation = Citation.from_node(node)
    assert (citation.file_name, citation.start, citation.end) == ("talk.mp4", 130.0, None)
    assert citation.label == "[talk.mp4 02:10]"
    assert citation.url == "/media/talk.mp4#t=130.0"
    assert citation.frame_path == "/idx/frames/f130.jpg"
    assert citation.modality == "frame"


def test_citation_from_a_document_chunk_is_untimed_and_links_the_file():
    node = TextNode(text="Notes.", metadata={"source": "/docs/notes.md", "modality": "text"})
    citation = Citation.from_node(node)
    assert (citation.start, citation.end, citation.label) == (None, None, "[notes.md]")
    assert citation.url == "/docs/notes.md"


def test_citations_are_frozen_and_hashable():
    with pytest.raises(AttributeError):
        TALK.start = 0.0  # type: ignore[misc]
    assert len({TALK, moment("talk.mp4", 94.9, 101.2)}) == 1


# -- recognising labels -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("[talk.mp4 01:34-01:41]", TALK),
        ("[talk.mp4 01:36]", TALK),
        ("[talk.mp4 01:34–01:41]", TALK),  # en dash
        ("[talk.mp4 01:34 to 01:41]", TALK),
        ("[talk.mp4, 01:35]", TALK),
        ("[talk.mp4 at 01:35]", TALK),
        ("[TALK.MP4 01:35]", TALK),
        ("[talk 01:35]", TALK),  # extension dropped
        ("[talk.mp4 02:10]", FRAME),
        ("[talk.mp4 1:02:03-1:02:10]", LATE),
        ("[talk.mp4 01:02:05]", LATE),
        ("[notes.md]", NOTES),
        ("[notes.md 00:10]", NOTES),  # a time on a document still cites the document
        ("[talk.mp4]", TALK),  # a bare file: its most relevant moment
        ("[demo.mov 00:15]", DEMO),
        ("[VIDEO at 00:15]", DEMO),  # vague, but only demo.mov has a moment then
        ("[00:15]", DEMO),
    ],
)
def test_a_label_matching_a_retrieved_moment_is_verified(written, expected):
    checked = check(f"Claim {written}.")
    assert checked.citations == (expected,)
    assert checked.unverified == ()
    assert [label.text for label in checked.labels] == [written]


@pytest.mark.parametrize(
    "written",
    [
        "[other.mp4 01:35]",  # a file that was not retrieved
        "[talk.mp4 05:00]",  # a time no retrieved moment covers
        "[ghost.pdf]",
        "[VIDEO at 07:00]",
    ],
)
def test_an_invented_label_is_unverified(written):
    checked = check(f"Claim {written}.")
    assert checked.citations == ()
    assert checked.unverified == (written,)


def test_a_vague_label_fitting_several_files_is_not_guessed():
    other = moment("other.mp4", 12.0, 18.0)
    checked = check("Claim [VIDEO at 00:15].", (DEMO, other))
    assert checked.unverified == ("[VIDEO at 00:15]",)


@pytest.mark.parametrize(
    "text",
    [
        "No labels here.",
        "See [1] and [2].",
        "It is [sic] wrong.",
        "Read [the docs](https://example.org/a.md).",
        "As in [Figure 1.2].",
        "- [x] done",
    ],
)
def test_brackets_that_are_not_labels_are_ignored(text):
    assert check(text).labels == ()


def test_tolerance_covers_whole_second_labels_and_no_more():
    # TALK runs 94.9-101.2 s; 01:45 is 3.8 s after its end.
    assert check("[talk.mp4 01:45]", tolerance_s=2.0).unverified == ("[talk.mp4 01:45]",)
    assert check("[talk.mp4 01:45]", tolerance_s=4.0).citations == (TALK,)
    assert check("[talk.mp4 01:34-01:41]", tolerance_s=0.0).citations == (TALK,)
    with pytest.raises(ValueError, match="tolerance_s"):
        check("x", tolerance_s=-1)


def test_the_nearest_moment_wins_when_several_fit():
    near = moment("talk.mp4", 100.0, 110.0)
    checked = check("[talk.mp4 01:41]", (TALK, near))
    assert checked.citations == (near,)


def test_a_copied_label_matches_its_own_moment_not_one_starting_a_fraction_closer():
    hit = moment("ozone.mp4", 23.9, 33.4)  # labelled 00:23-00:33
    on_screen = moment("ozone.mp4", 22.6, 36.0, modality="ocr")  # 22.6 is nearer to 23.0
    checked = check(f"All of it {hit.label}.", (on_screen, hit))
    assert checked.citations == (hit,)


def test_citations_are_unique_in_order_of_first_mention():
    checked = check("A [demo.mov 00:12]. B [talk.mp4 01:34-01:41]. C [demo.mov 00:10-00:20].")
    assert checked.citations == (DEMO, TALK)


# -- stripping and flagging ---------------------------------------------------------------


def test_unverified_labels_are_stripped_or_flagged():
    answer = "Fact A [talk.mp4 01:34-01:41]. Fact B [fake.mp4 00:01].\nFact C [notes.md]"
    checked = check(answer)
    assert checked.unverified == ("[fake.mp4 00:01]",)
    assert checked.strip_unverified() == "Fact A [talk.mp4 01:34-01:41]. Fact B.\nFact C [notes.md]"
    assert checked.flag_unverified() == (
        "Fact A [talk.mp4 01:34-01:41]. Fact B [fake.mp4 00:01 (unverified)].\nFact C [notes.md]"
    )


def test_a_group_keeps_its_verified_labels():
    checked = check("Both [talk.mp4 01:35; fake.mp4 00:02; demo.mov 00:11].")
    assert checked.citations == (TALK, DEMO)
    assert checked.unverified == ("[fake.mp4 00:02]",)
    assert checked.strip_unverified() == "Both [talk.mp4 01:35; demo.mov 00:11]."
    assert check("Only [fake.mp4 00:02; ghost.mp4 00:03].").strip_unverified() == "Only."


def test_an_answer_without_labels_is_unchanged():
    checked = check("Nothing cited.")
    assert checked.strip_unverified() == checked.flag_unverified() == "Nothing cited."


# -- timestamps ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("42", 42.0), ("01:34", 94.0), ("1:02:03", 3723.0), ("00:01.5", 1.5), (" 10:00 ", 600.0)],
)
def test_parse_timestamp(text, seconds):
    assert parse_timestamp(text) == seconds


@pytest.mark.parametrize("text", ["", "1::2", "a:bc", "1:2:3:4"])
def test_parse_timestamp_rejects_non_timestamps(text):
    with pytest.raises(ValueError):
        parse_timestamp(text)


# -- invariants over random retrievals and answers ----------------------------------------


def random_case(rng: random.Random) -> tuple[tuple[Citation, ...], list[str], list[str]]:
    files = [f"clip{n}.mp4" for n in range(rng.randint(1, 3))]
    retrieved = []
    for _ in range(rng.randint(1, 8)):
        start = rng.uniform(0, 7200)
        end = start + rng.uniform(0.5, 40) if rng.random() < 0.8 else None
        retrieved.append(moment(rng.choice(files), start, end))
    real = [m.label for m in rng.sample(retrieved, rng.randint(1, len(retrieved)))]
    invented = [
        moment_label(f"ghost{n}.mp4", rng.uniform(0, 7200), None) for n in range(rng.randint(0, 3))
    ]
    return tuple(retrieved), real, invented


@pytest.mark.parametrize("seed", range(60))
def test_invariants_hold_for_random_answers(seed):
    rng = random.Random(seed)
    retrieved, real, invented = random_case(rng)
    labels = real + invented
    rng.shuffle(labels)
    answer = " ".join(f"Claim {i} {label}." for i, label in enumerate(labels))

    checked = check_citations(answer, retrieved)

    # Every label written from a retrieved moment verifies, to a moment of that file near it.
    assert set(checked.unverified) == set(invented)
    for label in checked.labels:
        if label.citation is not None:
            assert label.text.startswith(f"[{label.citation.file_name} ")
            assert label.citation in retrieved
    # Stripping removes exactly the invented labels and is stable.
    stripped = checked.strip_unverified()
    again = check_citations(stripped, retrieved)
    assert again.unverified == ()
    assert again.citations == checked.citations
    assert not any(label in stripped for label in invented)
    assert all(label in stripped for label in real)
    # Flagging keeps every verified citation.
    assert check_citations(checked.flag_unverified(), retrieved).citations == checked.citations


@pytest.mark.parametrize("seed", range(20))
def test_formatted_timestamps_parse_back_to_whole_seconds(seed):
    seconds = random.Random(seed).uniform(0, 10 * 3600)
    assert parse_timestamp(format_timestamp(seconds)) == int(seconds)
