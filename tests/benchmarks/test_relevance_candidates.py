"""benchmarks/relevance_candidates.py: the candidate signals' scoring code."""

from __future__ import annotations

import numpy as np

from benchmarks.relevance_candidates import (
    TEXT_CANDIDATES,
    absent_far,
    candidates,
    one_letter_apart,
    phrase,
    typed,
)
from benchmarks.relevance_sets import Hit, Row
from benchmarks.scoring import Question
from llama_index_video.search.relevance import Vocabulary


def test_phrase_is_the_share_of_the_questions_word_pairs_held_as_pairs():
    question = "On which day does the chess club practise?"
    # (day, chess), (chess, club), (club, practise): the last two held
    assert phrase(question, "The chess club practises on Tuesdays.") == 2 / 3
    assert phrase(question, "The club plays chess on Tuesdays.") == 0.0
    assert phrase("What is ozone?", "Ozone.") == 0.0  # one content word: no pair


def test_typed_asks_for_a_kind_of_answer_and_checks_the_hit_holds_one():
    assert typed("What colour will the remote control be?", "It will be yellow.") == 1.0
    assert typed("What colour will the remote control be?", "It has a menu.") == -1.0
    assert typed("How tall is the lighthouse?", "Bus number 47 stops here.") == -1.0
    assert typed("How tall is the lighthouse?", "It is 40 metres high.") == 1.0
    assert typed("Which Java version are they using?", "Version 2.4 ships soon.") == 1.0
    assert typed("Who wrote the instructions?", "Anything.") == 0.0


def test_absent_far_counts_only_words_with_no_index_word_one_letter_away():
    assert one_letter_apart("chess", "chest") and one_letter_apart("club", "clubs")
    assert not one_letter_apart("chess", "cheap") and one_letter_apart("same", "same")
    vocabulary = Vocabulary.of({"chest": 3, "club": 4, "tuesday": 2}, 10)
    assert vocabulary.absent("chess club") > 0  # "chess" is nowhere in the index
    assert absent_far("chess club", vocabulary) == 0.0  # but "chest" is one letter away
    assert absent_far("saffron club", vocabulary) == vocabulary.absent("saffron club") > 0
    # The question's words read as absent reads them: the index's stop words aside.
    assert absent_far("What does the video say about the chess club?", vocabulary) == 0.0


def test_candidates_give_each_hit_a_line_and_agree_only_on_the_shared_top_hit():
    question = Question("q", "spoken", "When does the chess club meet?", "a.mp4", 10, 12)
    hits = (
        Hit("a.mp4", 10.0, 12.0, 0.5, 0.9, "The chess club meets on Tuesday.", "transcript"),
        Hit("a.mp4", 40.0, 42.0, 0.4, None, "Chess is a game.", "transcript"),
    )
    lines = candidates(Row(question, hits), Vocabulary.of({"chess": 2}, 2), {})
    assert lines.shape == (2, len(TEXT_CANDIDATES))
    agree, rank = TEXT_CANDIDATES.index("agree"), TEXT_CANDIDATES.index("rank")
    assert list(lines[:, agree]) == [1.0, 0.0] and list(lines[:, rank]) == [0.0, 1.0]
    assert np.all(lines[:, TEXT_CANDIDATES.index("question_words")] == 3)
