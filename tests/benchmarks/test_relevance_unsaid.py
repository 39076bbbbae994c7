"""The unsaid-word signals of benchmarks/relevance_unsaid.py (the benchmark is not run here)."""

from __future__ import annotations

import pytest

from benchmarks.relevance_unsaid import Question, Variant, chosen_veto, dominated, veto

# A meeting about a remote control that says "guarantee" and "hire", never "warranty".
MEETING = {
    "units": 100,
    "frequencies": {"remote": 40, "control": 40, "team": 9, "guarantee": 2, "hire": 3, "budget": 5},
}


def test_the_word_a_near_topic_question_names_is_unsaid():
    unsaid = Variant().unsaid("What warranty does the remote control have?", MEETING)
    assert unsaid > 0.5  # the rarest word, "warranty", weighs most
    assert Variant().unsaid("What is the budget for the remote control?", MEETING) == 0.0


def test_each_variant_leaves_out_or_matches_its_own_words():
    summary = "Summarize the discussion about the budget."
    assert Variant().unsaid(summary, MEETING) > 0.0  # "summarize", "discussion"
    assert Variant(discourse=True).unsaid(summary, MEETING) == 0.0
    hiring = "Who talked about hiring?"
    assert Variant(discourse=True).unsaid(hiring, MEETING) == 1.0
    assert Variant(discourse=True, suffixes=True).unsaid(hiring, MEETING) == 0.0
    named = "What did the team think of Karen's budget?"
    assert Variant(discourse=True).unsaid(named, MEETING) > 0.0
    assert Variant(discourse=True, names=True).unsaid(named, MEETING) == 0.0


def test_a_near_word_of_the_index_counts_as_said_only_with_near():
    def near(word: str, index: str) -> float:
        return 0.8 if (word, index) == ("warranty", "m") else 0.1

    question = "What warranty does the remote control have?"
    assert Variant(near=0.7).unsaid(question, MEETING, name="m", near=near) == 0.0
    assert Variant(near=0.9).unsaid(question, MEETING, name="m", near=near) > 0.5
    assert Variant().unsaid(question, MEETING, name="m", near=near) > 0.5


def _question(answerable: bool, best: float, unsaid: float) -> Question:
    return Question(answerable=answerable, searched=True, kept=True, best=best, unsaid=unsaid)


def test_the_veto_is_chosen_to_empty_no_answer_of_the_fit_sets():
    fit = {
        "a": [
            _question(True, 0.30, 0.6),  # a paraphrase: unsaid words, confident
            _question(True, 0.15, 0.1),  # a weak answer with its words said
            _question(False, 0.20, 0.7),  # names what is never said
            _question(False, 0.12, 0.0),
        ]
    }
    unsaid, doubt = chosen_veto(fit)
    kept = veto(fit["a"], unsaid, doubt)
    assert kept == [True, True, False, True]
    assert unsaid == pytest.approx(0.7) and doubt == pytest.approx(0.21)  # the least it needs


def test_a_question_is_dominated_by_a_less_confident_answer_with_more_unsaid():
    near_topic = _question(False, 0.2, 0.5)
    assert dominated(near_topic, [_question(True, 0.1, 0.6)])
    assert not dominated(near_topic, [_question(True, 0.3, 0.6), _question(True, 0.1, 0.4)])
