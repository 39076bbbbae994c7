"""The check of ``benchmarks/language_filter.py``: which recordings are labelled French."""

from __future__ import annotations

from benchmarks.language_filter import LANGUAGES, WAYS, Measured, french, labels


def test_odd_recordings_are_the_french_ones():
    assert LANGUAGES == ("en", "fr")
    assert french("/idx/recordings/lecture_001.mp4") and french("lecture_039.mp4")
    assert not french("/idx/recordings/lecture_000.mp4") and not french("lecture_012.mp4")
    assert labels(2) == LANGUAGES and labels(10) == ("en",) * 9 + ("fr",)
    rare = [i for i in range(40) if french(f"lecture_{i:03d}.mp4", 10)]
    assert rare == [9, 19, 29, 39] == [i for i in range(40) if labels(10)[i % 10] == "fr"]


def test_rounds_pool_every_search_and_hit_per_way():
    pooled = Measured()
    for seconds, hits, wrong in ((0.01, 5, 0), (0.03, 4, 1)):
        pooled.add(
            Measured(
                seconds={way: [seconds] for way in WAYS},
                hits=dict.fromkeys(WAYS, hits),
                lexical_seconds={way: [seconds / 10] for way in WAYS},
                rows_read=dict.fromkeys(WAYS, hits * 50),
                wrong=wrong,
                package="/src/llama_index_video",
            )
        )
    assert pooled.seconds == {way: [0.01, 0.03] for way in WAYS}
    assert pooled.lexical_seconds == {way: [0.001, 0.003] for way in WAYS}
    assert pooled.hits == dict.fromkeys(WAYS, 9) and pooled.wrong == 1
    assert pooled.rows_read == dict.fromkeys(WAYS, 450)
    assert pooled.package == "/src/llama_index_video"
