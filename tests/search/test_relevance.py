"""The rejection signal: content words, distinctiveness-weighted coverage, the gate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from llama_index_video.results import ContextSpan, SearchHit
from llama_index_video.search.relevance import (
    FEATURES,
    Calibration,
    ConfidenceGate,
    Relevance,
    RelevanceGate,
    Vocabulary,
    asks_for_name,
    asks_for_number,
    content_words,
    coverage,
    hit_features,
    holds_name,
    holds_number,
    index_vocabulary,
    standout,
)
from llama_index_video.store.lexical import LexicalStore


def hit(text: str, score: float | None, *context: str) -> SearchHit:
    return SearchHit(
        source="/m/talk.mp4",
        modality="transcript",
        start=1.0,
        end=2.0,
        score=score,
        text=text,
        label="[talk.mp4 00:01-00:02]",
        url="/m/talk.mp4#t=1.0",
        frame_path=None,
        frame_time=None,
        context=[ContextSpan(1.0, 2.0, c) for c in context],
    )


TOPIC = [
    "The ozone layer absorbs about ninety percent of ultraviolet B radiation.",
    "In 1985 scientists discovered a hole in the ozone layer over Antarctica.",
    "The ozone layer is expected to recover by about 2066.",
]


def test_content_words_drop_function_words_and_agree_on_word_stems():
    assert content_words("What is the ozone layer made of?") == ["ozone", "layer"]
    assert content_words("How much does it absorb?") == ["absor"]
    assert content_words("absorbs absorption Absorbed") == ["absor"]
    assert content_words("What is the p99 in 2066?") == ["p99", "2066"]
    assert content_words("What is it?") == []


def test_a_near_topic_question_misses_its_distinctive_words():
    near = coverage("How thick is the ozone layer over the Arctic?", TOPIC)
    answerable = coverage("When was the hole in the ozone layer discovered?", TOPIC)
    paraphrase = coverage("In what year did scientists find the hole over Antarctica?", TOPIC)
    assert near < 0.3 < paraphrase < answerable == pytest.approx(1.0)


def test_words_every_text_contains_weigh_least():
    # "ozone" is in all three texts, "antarctica" in one: missing the rarer word costs more.
    without_topic = coverage("ozone mercury", TOPIC)
    without_rare = coverage("antarctica mercury", TOPIC)
    assert without_topic < without_rare


def test_a_question_without_content_words_is_not_contradicted():
    assert coverage("What is it?", TOPIC) == 1.0


@given(
    st.text(alphabet="abcdefgh ozone?", max_size=40),
    st.lists(st.text(alphabet="abcdefgh ozone.", max_size=60), min_size=1, max_size=5),
)
def test_coverage_is_a_share(question, texts):
    assert 0.0 <= coverage(question, texts) <= 1.0


def test_relevance_reads_the_best_hits_and_their_context():
    hits = [hit("Ozone is made of", 0.41, "three oxygen atoms."), hit("Other", 0.52)]
    relevance = Relevance.of("Which atoms make up ozone?", hits)
    assert relevance.similarity == 0.52
    assert relevance.coverage == pytest.approx(1.0)
    assert Relevance.of("anything", [hit("x", None)]).similarity == 0.0


def test_the_gate_combines_cosine_and_coverage():
    gate = RelevanceGate(weight=0.5, cut=0.6)
    about = [hit("The hole was discovered in 1985 over Antarctica.", 0.35)]
    assert gate.accepts("When was the hole over Antarctica discovered?", about)
    assert not gate.accepts("How thick is the layer over the Arctic?", about)
    assert not gate.accepts("When was the hole discovered?", [])
    assert gate.score(Relevance(similarity=0.3, coverage=0.4)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="weight"):
        RelevanceGate(weight=-1.0, cut=0.5)


def test_a_question_asking_for_a_number_wants_a_hit_that_holds_one():
    assert asks_for_number("How many countries signed it?")
    assert asks_for_number("When was the hole discovered?")
    assert not asks_for_number("Who owns the billing migration?")
    assert holds_number("It was found in 1985.") and holds_number("on the fourteenth of March")
    assert holds_number("about ninety percent") and not holds_number("made of oxygen atoms")
    question = "How many countries signed the protocol?"
    rows = hit_features(
        question,
        [hit("Signed by 197 countries", 0.5), hit("The protocol banned the chemicals", 0.5)],
        [None, None],
    )
    asked = FEATURES.index("asked_for")
    assert [row[asked] for row in rows] == [1.0, -1.0]
    assert (
        hit_features("Who signed the protocol?", [hit("Signed by 197", 0.5)], [None])[0][asked]
        == 0.0
    )


def test_a_question_asking_for_a_name_wants_a_hit_that_holds_one():
    assert asks_for_name("Who built the greenhouse?")
    assert asks_for_name("Which company built the greenhouse?")
    assert asks_for_name("Where was the meeting held?")
    assert not asks_for_name("How many volunteers came?")
    assert holds_name("It was built by a small company from Leeds.")
    assert not holds_name("Welcome to the garden. Tomatoes need water.")  # sentence starts
    asked = FEATURES.index("asked_name")
    hits = [hit("The greenhouse was built by Harris and Sons.", 0.5), hit("It is green.", 0.5)]
    rows = hit_features("Who built the greenhouse?", hits, [None, None])
    assert [row[asked] for row in rows] == [1.0, -1.0]
    assert hit_features("How big is it?", hits, [None, None])[0][asked] == 0.0


def test_hit_features_measure_each_hit_against_the_others():
    question = "When was the hole over Antarctica discovered?"
    hits = [
        hit("The hole was discovered in 1985 over Antarctica.", 0.6),
        hit("The ozone layer absorbs ultraviolet radiation.", 0.4),
    ]
    first, second = (
        dict(zip(FEATURES, row, strict=True)) for row in hit_features(question, hits, [0.75, None])
    )
    assert first["gap"] == pytest.approx(0.2) and second["gap"] == pytest.approx(-0.2)
    assert first["lexical"] == pytest.approx(0.15)  # what the exact words added
    assert second["lexical"] == 0.0
    assert first["own_coverage"] == pytest.approx(1.0) and second["own_coverage"] == 0.0
    assert first["similarity"] == second["similarity"] == 0.6


def test_words_absent_from_the_whole_index_are_measured_by_their_weight():
    # Document frequencies over 10 units, as the lexical index keeps them (no stems).
    vocabulary = Vocabulary.of(
        {"ozone": 9, "layer": 8, "antarctica": 1, "discovered": 2, "hole": 2, "newspaper": 0}, 10
    )
    assert vocabulary.absent("When was the hole over Antarctica discovered?") == 0.0
    # A near-topic question naming what the recordings never mention.
    assert vocabulary.absent("Which London newspaper reported the ozone hole?") > 0.6
    # Common words found weigh little, so one absent word of three still counts most.
    assert 0.5 < vocabulary.absent("How thick is the ozone layer in Iceland?") < 1.0
    assert vocabulary.absent("Was the layer discovering holes?") == 0.0  # stems agree
    assert vocabulary.absent("What is it?") == 0.0  # no content words
    assert Vocabulary.of({}, 0).absent("Anything at all?") == 0.0  # an empty index
    assert Vocabulary.of({"ozono": 3}, 4).absent("¿Dónde está la capa de ozono?") > 0.0
    assert Vocabulary.of({"臭": 1, "氧": 1}, 1).absent("臭氧") == 0.0  # one token per character


def test_the_vocabulary_of_a_lexical_index_counts_the_units_holding_each_word(tmp_path: Path):
    from llama_index.core.schema import TextNode

    store = LexicalStore(tmp_path)
    store.add(
        TextNode(id_=f"n{i}", text=text, metadata={"content_hash": "c", "modality": "transcript"})
        for i, text in enumerate(["The ozone hole was found.", "Ozone absorbs light."])
    )
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot is not None
    assert snapshot.frequencies["ozone"] == 2 and snapshot.frequencies["hole"] == 1
    vocabulary = index_vocabulary(snapshot)
    assert vocabulary.units == 2 and index_vocabulary(snapshot) is vocabulary  # made once
    assert vocabulary.absent("Which newspaper reported it?") == 1.0


def test_a_contraction_is_no_word_the_index_lacks(tmp_path: Path):
    """A user types "what's" and "don't", straight or curly; the index never holding
    "whats" or "dont" says nothing about whether it answers."""
    from llama_index.core.schema import TextNode

    store = LexicalStore(tmp_path)
    said = "We don't ship the release plan until it's reviewed."
    store.add([TextNode(id_="n", text=said, metadata={"content_hash": "c", "modality": "x"})])
    store.refresh()
    snapshot = store.snapshot()
    assert snapshot is not None
    vocabulary = index_vocabulary(snapshot)
    for question in (
        "what's the release plan?",
        "What\u2019s the release plan?",
        "who's reviewing the release plan?",
        "when's the release plan, and why shouldn't they ship it?",
        "they're reviewing the plan, aren't they?",
        "don't they ship the release plan?",  # the index's own "don't"
    ):
        assert vocabulary.absent(question) == 0.0, question
    assert vocabulary.absent("what's the budget?") == 1.0  # a word it lacks still counts


def test_words_the_index_never_keeps_are_not_absent():
    """The lexical index leaves out its stop words ("video", "talk", "won"), so no
    index holds them: a question naming them misses nothing the index could say."""
    vocabulary = Vocabulary.of({"ozone": 3, "hole": 1, "cup": 1, "axis": 1}, 4)
    assert vocabulary.absent("What does the video say about the ozone hole?") == 0.0
    assert vocabulary.absent("What did they talk about, the ozone hole?") == 0.0
    assert vocabulary.absent("Who won the cup?") == 0.0
    assert vocabulary.absent("What is on the Y axis?") == 0.0


def test_words_absent_from_the_index_lower_the_confidence():
    absent = FEATURES.index("absent")
    coefficients = [0.0] * len(FEATURES)
    coefficients[FEATURES.index("cosine")], coefficients[absent] = 4.0, -3.0
    calibration = Calibration(coefficients=tuple(coefficients), intercept=-1.0)
    hits = [hit("The hole was discovered in 1985.", 0.6)]
    (row,) = hit_features("Which newspaper reported it?", hits, [None], absent=0.8)
    assert row[absent] == 0.8
    (known,) = calibration.confidences("Which newspaper reported it?", hits, [None])
    (missing,) = calibration.confidences("Which newspaper reported it?", hits, [None], absent=0.8)
    assert missing < known


def test_confidence_rises_with_the_signals_and_stays_a_probability():
    calibration = Calibration(
        coefficients=(4.0, 0, 2.0, *[0.0] * (len(FEATURES) - 3)), intercept=-3.0
    )
    question = "When was the hole over Antarctica discovered?"
    strong, weak = calibration.confidences(
        question,
        [hit("The hole over Antarctica was discovered in 1985.", 0.7), hit("Ozone.", 0.3)],
        [None, None],
    )
    assert 0.0 < weak < strong < 1.0
    assert calibration.probability((1e6, *[0.0] * (len(FEATURES) - 1))) == pytest.approx(1.0)
    with pytest.raises(ValueError, match=f"{len(FEATURES)} coefficients"):
        Calibration(coefficients=(1.0,), intercept=0.0)


def test_a_confidence_gate_turns_away_under_its_cut_and_is_sure_under_sure():
    calibration = Calibration(coefficients=(10.0, *[0.0] * (len(FEATURES) - 1)), intercept=-5.0)
    gate = ConfidenceGate(calibration=calibration, cut=0.5, sure=0.1)
    weak = [hit("Something near the topic.", 0.4)]  # sigmoid(-1): 0.27
    assert not gate.accepts("What is it?", weak)
    assert gate.accepts("What is it?", weak, lenient=True)  # not sure: the model decides
    assert not gate.accepts("What is it?", [hit("Far away.", 0.1)], lenient=True)  # 0.02
    assert not gate.accepts("What is it?", [], lenient=True)
    assert gate.accepts("What is it?", [replace(weak[0], confidence=0.9)])  # as search set it
    with pytest.raises(ValueError, match="sure"):
        ConfidenceGate(calibration=calibration, cut=0.2, sure=0.5)


def test_standout_is_how_far_the_best_stands_above_the_rest():
    assert standout([0.9, 0.5, 0.5, 0.5]) == pytest.approx(3**0.5)
    assert standout([0.8, 0.6]) == pytest.approx(1.0)  # two values: always one deviation
    assert standout([0.7]) == 0.0
    assert standout([]) == 0.0
    assert standout([0.4, 0.4, 0.4]) == 0.0


@given(st.lists(st.floats(-1.0, 1.0), min_size=2, max_size=50))
def test_standout_does_not_move_with_the_similarity_scale(cosines):
    assume(max(cosines) - min(cosines) > 1e-3)
    shifted = [0.5 * c + 0.2 for c in cosines]
    assert standout(shifted) == pytest.approx(standout(cosines), abs=1e-6)


def test_a_standout_gate_scores_the_recording_and_coverage():
    gate = RelevanceGate(signal="standout", weight=1.0, cut=2.5)
    about = [hit("The hole was discovered in 1985 over Antarctica.", 0.35)]
    question = "When was the hole over Antarctica discovered?"
    assert gate.needs_recording
    assert gate.accepts(question, about, recording=[0.6, 0.3, 0.3, 0.3])  # 1.73 + 1.0
    assert not gate.accepts(question, about, recording=[0.6, 0.55, 0.5, 0.45])  # 1.34 + 1.0
    assert gate.accepts(question, about)  # no recording: too short to judge, it abstains
    assert not gate.accepts(question, [], recording=[0.6, 0.3, 0.3, 0.3])
    assert gate.score(Relevance(similarity=0.9, coverage=0.5, standout=1.2)) == pytest.approx(1.7)
    assert not RelevanceGate(weight=0.0, cut=0.0).needs_recording
    with pytest.raises(ValueError, match="signal"):
        RelevanceGate(signal="margin", weight=1.0, cut=2.0)  # type: ignore[arg-type]


# Decisions of the calibrated standout gate on the example media (script transcripts:
# no dependence on what speech recognition hears). The near-topic questions reach
# cosine 0.4-0.7 with the recordings, above the threshold, so without a gate they
# return moments.
ANSWERED = ("How many countries signed the Montreal Protocol?", "What is the p99 latency?")
REJECTED = (
    "How thick is the ozone layer over the Arctic?",
    "Which company processes the card payments?",
)


@pytest.fixture(scope="module")
def standout_index(example_index):
    from llama_index_video.index import VideoIndex

    index = VideoIndex(
        example_index.path, embed_model=example_index.embed_model, relevance="standout"
    )
    yield index
    index.close()


@pytest.mark.parametrize("question", ANSWERED)
def test_the_standout_gate_answers_what_a_recording_says(standout_index, question):
    assert standout_index.search(question)


@pytest.mark.parametrize("question", REJECTED)
def test_the_standout_gate_rejects_near_topic_questions(example_index, standout_index, question):
    assert example_index.search(question), "no gate: the threshold alone lets it through"
    assert standout_index.search(question) == []
    assert standout_index.ask(question).found is False


def test_recording_scores_are_the_best_recordings_candidates(example_index):
    question = "How many countries signed the Montreal Protocol?"
    scores = example_index.recording_scores(question)
    assert 2 <= len(scores) <= 50
    assert scores == sorted(scores, reverse=True)
    best = max(hit.score or 0.0 for hit in example_index.search(question))
    assert scores[0] == pytest.approx(best, abs=1e-3)  # the best hit's cosine heads the list


def test_a_standout_gate_needs_the_recording_and_a_calibration(example_index):
    from llama_index_video.index import VideoIndex
    from llama_index_video.search.searcher import VideoSearcher

    gate = RelevanceGate(signal="standout", weight=1.0, cut=2.0)
    with pytest.raises(ValueError, match="recording"):
        VideoSearcher(retriever=example_index.as_retriever(), relevance=gate)
    with pytest.raises(ValueError, match="standout"):
        VideoIndex(example_index.path, embed_model=example_index.embed_model, relevance="x")


def test_a_standout_gate_abstains_on_a_recording_too_short_for_a_spread():
    gate = RelevanceGate(signal="standout", weight=1.109, cut=1.778)
    # One value stands out by 0 deviations and two by exactly 1, whatever they are.
    assert standout([0.9, 0.1]) == pytest.approx(1.0)
    assert standout([0.35, 0.34]) == pytest.approx(1.0)
    off_topic = [hit("The hole was discovered in 1985 over Antarctica.", 0.35)]
    question = "How thick is the layer over the Arctic?"
    for short in ([], [0.35], [0.35, 0.2]):
        assert gate.abstains(short)
        assert gate.accepts(question, off_topic, recording=short)  # the threshold decides
    assert not gate.abstains([0.35, 0.34, 0.33])
    assert not gate.accepts(question, off_topic, recording=[0.35, 0.34, 0.33])
    assert gate.accepts(question, off_topic, recording=[0.6, 0.3, 0.3, 0.3, 0.3, 0.3])
    assert not gate.accepts(question, [], recording=[0.35])  # nothing found: nothing to answer
    assert not RelevanceGate(weight=1.0, cut=2.0).abstains([])  # a similarity gate judges


# Recordings of one and two units, transcribed from sidecar subtitles (no ASR): the
# calibrated standout gate could never answer from the first (standout 0) and needed
# coverage >= 0.70 in the second (standout always 1).
SHORT_RECORDINGS = {
    "bees.wav": [
        "Honey bees keep the brood nest of the hive at thirty five degrees by fanning "
        "their wings in summer and by clustering and shivering their flight muscles in winter."
    ],
    "sourdough.wav": [
        "Feed the sourdough starter twice a day with equal weights of flour and water, "
        "and keep it in a warm kitchen until it doubles in size within six hours of a feed.",
        "Bake the loaf in a covered cast iron pot at two hundred and fifty degrees for "
        "twenty minutes, then remove the lid so that the crust browns for twenty more.",
    ],
}
SHORT_QUESTIONS = {
    "bees.wav": "At what temperature do honey bees keep the brood nest?",
    "sourdough.wav": "How often should the sourdough starter be fed?",
}


def _srt(sentences: list[str]) -> str:
    cues = [
        f"{i}\n00:00:{10 * i - 9:02d},000 --> 00:00:{10 * i - 1:02d},000\n{text}\n"
        for i, text in enumerate(sentences, start=1)
    ]
    return "\n".join(cues)


@pytest.fixture(scope="module")
def short_recordings(tmp_path_factory, make_wav, embed_model):
    import numpy as np

    from llama_index_video.index import VideoIndex

    media = tmp_path_factory.mktemp("short_media")
    for name, sentences in SHORT_RECORDINGS.items():
        make_wav(media / name, np.zeros(16_000 * 10 * len(sentences), dtype=np.float32))
        (media / name).with_suffix(".srt").write_text(_srt(sentences))
    folder = tmp_path_factory.mktemp("short_index")
    index = VideoIndex(folder, embed_model=embed_model, relevance="standout")
    report = index.ingest([media])
    assert report.ok, report
    yield index
    index.close()


@pytest.mark.parametrize("name", SHORT_RECORDINGS)
def test_the_standout_gate_answers_from_one_and_two_unit_recordings(short_recordings, name):
    question = SHORT_QUESTIONS[name]
    hits = short_recordings.search(question)
    assert hits, "a recording too short to judge: the threshold decides"
    assert {Path(hit.source).name for hit in hits[:1]} == {name}
    recording = short_recordings.recording_scores(question)
    assert len(recording) == len(SHORT_RECORDINGS[name])  # one candidate per unit
    gate = short_recordings.relevance
    assert gate is not None and gate.abstains(recording)
    judged = gate.score(Relevance.of(question, hits, recording=recording))
    assert name == "sourdough.wav" or judged < gate.cut, "judged, one unit could never pass"
    assert short_recordings.ask(question).found


def test_search_weighs_the_question_words_the_whole_index_lacks(example_index):
    from llama_index_video.search.searcher import VideoSearcher

    policy = example_index.search_policy()
    vocabulary = policy.vocabulary()
    assert vocabulary is not None and vocabulary.units > 0
    assert policy.vocabulary() is vocabulary  # made once per lexical generation
    near = "Which London newspaper first reported the ozone hole?"
    assert vocabulary.absent(near) > 0.5
    assert vocabulary.absent("When was the hole in the ozone layer discovered?") == 0.0
    coefficients = [0.0] * len(FEATURES)
    coefficients[FEATURES.index("cosine")], coefficients[FEATURES.index("absent")] = 5.0, -4.0
    calibration = Calibration(coefficients=tuple(coefficients), intercept=-2.0)
    found = {}
    for name, words in (("blind", None), ("told", policy.vocabulary)):
        searcher = VideoSearcher(
            retriever=policy.retriever(top_k=3),
            locate=policy.locate,
            calibration=calibration,
            vocabulary=words,
        )
        found[name] = searcher.search(near)
    assert found["blind"] and len(found["blind"]) == len(found["told"])
    for blind, told in zip(found["blind"], found["told"], strict=True):
        assert told.confidence is not None and blind.confidence is not None
        assert told.confidence < blind.confidence


# Questions as users type them, with contractions (in no question set of the fit), and
# the file and second of examples/timeline.json that answer them.
CONTRACTED = (
    ("where's the hole in the ozone layer?", "ozone_explainer.mp4", 49.0),
    ("what're the chemicals that caused it?", "ozone_explainer.mp4", 56.5),
    ("what's the median request time?", "checkout_deep_dive.mp4", 37.0),
    ("who's owning the billing migration?", "team_sync.mp3", 14.0),
)


@pytest.mark.parametrize(("question", "file", "second"), CONTRACTED)
def test_a_question_typed_with_a_contraction_misses_no_word(example_index, question, file, second):
    vocabulary = example_index.search_policy().vocabulary()
    spelled_out = question.replace("'re", " are").replace("'s", " is")
    assert vocabulary.absent(question) == vocabulary.absent(spelled_out)
    first = example_index.search(question)[0]
    assert Path(first.source).name == file
    assert first.start is not None and first.end is not None
    assert first.start - 1.0 <= second <= first.end
