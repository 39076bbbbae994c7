"""The question sets of the relevance fit and their signals, as cached (issue 35).

Every question set of :data:`SETS` is a group of recordings indexed together (the
examples, each held-out narration, the real speech, the 20-minute recording, the
multilingual recordings) with all the questions written about them
(``questions*.json``, format in ``benchmarks/questions.json``'s ``about``), searched with
one embedding model. For each question the search's hits *without the gate* are read
once, with what the confidence needs (each hit's cosine, fused score, text and
context), and cached as JSON (:func:`cached`; ``benchmarks/relevance_signals/``, kept in
the repository: a re-fit reads them and ingests nothing), with the index's vocabulary
(each word's number of moments, for the words a question names that the index never
holds). The meetings are the exception to "indexed together": each is its own index,
as ``benchmarks/meeting_search.py`` builds it, and its questions are asked of it (each
cached row names its index, each index its vocabulary). ``benchmarks/relevance_fit.py``
fits and scores on them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.meetings import SETS as MEETING_SETS  # noqa: E402
from benchmarks.scoring import Question  # noqa: E402
from llama_index_video.search.policy import DEFAULT_THRESHOLDS  # noqa: E402
from llama_index_video.search.relevance import Vocabulary  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parent
TOP_K = 5


Timeline = dict[str, tuple[float, float]]
"""A long recording's facts and their spans (seconds)."""


@dataclass(frozen=True)
class QuestionSet:
    name: str
    questions: tuple[str, ...]
    """Question files under benchmarks/."""
    media: tuple[str, ...] = ()
    """Paths under the repository root, ingested into one index folder."""
    minutes: float | None = None
    """Instead of ``media``: the long recording of ``benchmarks/long_speech.py`` of this
    length, with its own facts and unanswerable questions; the files' questions then
    name their moment by ``fact``."""
    languages: Material | None = None
    """Instead of ``media``: the recordings of ``benchmarks/multilingual.json``, the
    espeak-ng ones (``"synthetic"``, their scripts as subtitles) or those we did not make
    (``"real"``, transcribed), each question asked in the recording's language and in
    English; the files' questions are the near-topic ones, by ``near`` recording."""
    meetings: tuple[str, ...] = ()
    """Instead of ``media``: these QMSum meetings of ``benchmarks/meetings/`` (real
    transcripts, synthetic timing), each ingested into its own index from subtitles as
    :func:`benchmarks.meeting_search.meeting_index` does, with their annotators'
    questions (answered by any of their stretches, :meth:`spans`) and the near-topic
    ones of the files (``meetings/unanswerable.json``), asked of their meeting's index."""
    embed: str = "english"
    """The embedding model: ``"english"`` (the default) or ``"multilingual"`` (e5)."""

    def load(
        self, timeline: Timeline | None = None, work: Path | None = None
    ) -> tuple[list[Question], list[Path], Timeline]:
        """The set's questions, the media to ingest and the long recording's timeline
        (its facts' spans, or the synthetic sentences'); given that timeline (as cached),
        no recording is made and there is nothing to ingest. ``work``: where made
        recordings are written."""
        if self.languages is not None:
            return languages(self, timeline, work)
        if self.meetings:
            return [q for _, q, _ in self.meeting_questions()], [], {}
        if self.minutes is None:
            return load_questions(self.questions), [ROOT / m for m in self.media], {}
        from benchmarks.long_speech import DEFAULT_CACHE, NAME, questions, recording

        media = []
        if timeline is None:
            path, timeline, _ = recording(self.minutes, DEFAULT_CACHE)
            media = [path]
        file = NAME.format(minutes=f"{self.minutes:g}")
        own = questions(timeline, file)
        for name in self.questions:
            for q in json.loads((BENCHMARKS / name).read_text())["questions"]:
                start, end = timeline[q["fact"]] if "fact" in q else (None, None)
                at = file if "fact" in q else None
                answer = tuple(q.get("answer", ()))
                own.append(Question(q["id"], q["kind"], q["question"], at, start, end, answer))
        return own, media, timeline

    def meeting_questions(self) -> list[tuple[str, Question, tuple[tuple[float, float], ...]]]:
        """The meetings' questions: each with its meeting (the index it is asked of) and
        its answer stretches (none: unanswerable). An answerable question's ``file`` is
        its meeting's recording, its span the first stretch."""
        from benchmarks.meeting_search import recording_name
        from benchmarks.meetings import load

        asked = []
        for name in self.meetings:
            for number, (text, spans) in enumerate(load(name).asked):
                question = Question(
                    f"{name}/{number}", "topic", text, recording_name(name), *spans[0]
                )
                asked.append((name, question, tuple(spans)))
            for file_name in self.questions:
                near = json.loads((BENCHMARKS / file_name).read_text())["questions"]
                for number, text in enumerate(near.get(name, [])):
                    asked.append((name, Question(f"{name}/none/{number}", "none", text), ()))
        return asked

    def spans(self) -> dict[str, tuple[tuple[float, float], ...]]:
        """Each meeting question's answer stretches, by id (other sets have none)."""
        return {q.id: spans for _, q, spans in self.meeting_questions() if spans}


Material = Literal["synthetic", "real"]


def languages(
    spec: QuestionSet, timeline: Timeline | None, work: Path | None
) -> tuple[list[Question], list[Path], Timeline]:
    """:meth:`QuestionSet.load` for the recordings of ``benchmarks/multilingual.json``;
    the timeline holds each synthetic sentence's span (``file#number``)."""
    from benchmarks import multilingual

    asked: list[Question] = []
    media: list[Path] = []
    if spec.languages == "synthetic":
        recordings, gap = multilingual.load_set()
        if timeline is None:
            assert work is not None, "making the recordings needs a work folder"
            timeline = {}
            for recording in recordings:
                cues = multilingual.synthesise(recording, work, gap, subtitles=True)
                media.append(work / recording.file)
                for number, cue in enumerate(cues):
                    timeline[f"{recording.file}#{number}"] = cue
        for recording in recordings:
            for item in recording.items:
                start, end = timeline[f"{recording.file}#{item.sentence}"]
                for way, text in (("native", item.native), ("english", item.english)):
                    if text:
                        asked.append(
                            Question(f"{item.id}/{way}", "spoken", text, recording.file, start, end)
                        )
    else:
        for real in multilingual.load_real():
            if timeline is None:
                assert work is not None, "writing the recordings needs a work folder"
                multilingual.write_real(real, work)
                media.append(work / real.file)
            for way, chosen in real.asked.items():
                asked.extend(
                    Question(f"{q.id}/{way}", "spoken", q.question, q.file, q.start, q.end)
                    for q in chosen
                )
    files = {q.file for q in asked}
    for name in spec.questions:
        for q in json.loads((BENCHMARKS / name).read_text())["questions"]:
            if q["near"] in files:
                for way in ("native", "english"):
                    if q.get(way):
                        asked.append(Question(f"{q['id']}/{way}", "none", q[way]))
    return asked, media, timeline or {}


ENGLISH_SETS = (
    QuestionSet(
        "examples", ("questions.json", "questions_users_examples.json"), ("examples/media",)
    ),
    QuestionSet(
        "tomatoes",
        ("questions_heldout.json", "questions_users_tomatoes.json"),
        ("tests/fixtures/speech/narration_en.ogg",),
    ),
    QuestionSet(
        "bicycle",
        ("questions_heldout_bicycle.json", "questions_users_bicycle.json"),
        ("tests/fixtures/speech/bicycle_en.ogg",),
    ),
    QuestionSet(
        "real speech",
        ("questions_users_real.json",),
        tuple(json.loads((BENCHMARKS / "questions_users_real.json").read_text())["media"]),
    ),
    QuestionSet("long (20 min)", ("questions_users_long.json",), minutes=20.0),
    QuestionSet(
        "meetings",
        ("meetings/unanswerable.json",),
        meetings=tuple(name for names in MEETING_SETS.values() for name in names),
    ),
)
SETS = (
    *ENGLISH_SETS,
    # The multilingual embedding's own calibration: its cosines have another scale. The
    # short English sets searched with it too, so that its fit sees more than two sets.
    *(replace(s, name=f"{s.name}, e5", embed="multilingual") for s in ENGLISH_SETS[:4]),
    QuestionSet(
        "languages, synthetic",
        ("questions_users_multilingual.json",),
        languages="synthetic",
        embed="multilingual",
    ),
    QuestionSet(
        "languages, real",
        ("questions_users_multilingual.json",),
        languages="real",
        embed="multilingual",
    ),
)


@dataclass(frozen=True)
class Hit:
    file: str
    start: float | None
    end: float | None
    score: float | None
    fused: float | None
    text: str
    modality: str


@dataclass(frozen=True)
class Row:
    question: Question
    hits: tuple[Hit, ...]
    absent: float = 0.0
    """The question's words absent from the whole index (:meth:`Vocabulary.absent`)."""
    spans: tuple[tuple[float, float], ...] = ()
    """When annotators marked several stretches as the answer (the meetings'): a hit in
    the question's file overlapping any of them answers."""
    index: str = ""
    """The index the question was asked of, when a set has several (the meetings')."""


def load_questions(names: Sequence[str]) -> list[Question]:
    from benchmarks.evaluate import load_questions as load

    return [q for name in names for q in load(BENCHMARKS / name)]


def collect(spec: QuestionSet, folder: Path) -> tuple[list[dict], Timeline, dict]:
    """Each question's hits without the gate (the default threshold applied), as cached
    (see the module docstring), the long recording's timeline and the index's vocabulary
    (each word's document frequency, :class:`~llama_index_video.search.relevance.
    Vocabulary`; the meetings': each meeting's, under ``indexes``)."""
    from llama_index_video.embeddings.local import MULTILINGUAL_MODEL
    from llama_index_video.embeddings.spec import EmbeddingSpec
    from llama_index_video.index import VideoIndex

    if spec.meetings:
        rows, vocabulary = collect_meetings(spec, folder)
        return rows, {}, vocabulary
    work = folder / "media"
    work.mkdir(parents=True, exist_ok=True)
    asked, media, timeline = spec.load(work=work)
    model = EmbeddingSpec(model=MULTILINGUAL_MODEL) if spec.embed == "multilingual" else None
    index = VideoIndex(folder / "index", relevance=None, embed_model=model)
    try:
        report = index.ingest(media)
        if not report.ok:
            raise SystemExit(f"{spec.name}: ingest failed: {report.of('failed')}")
        rows = ungated_hits(index, asked)
        vocabulary = {"identity": index.identity, **index_words(index)}
    finally:
        index.close()
    return rows, timeline, vocabulary


def collect_meetings(spec: QuestionSet, folder: Path) -> tuple[list[dict], dict]:
    """:func:`collect` for the meetings: each meeting's index built (or reopened from
    ``folder``) as ``benchmarks/meeting_search.py`` builds it, its questions asked of it."""
    from benchmarks.meeting_search import meeting_index
    from benchmarks.meetings import load
    from llama_index_video.embeddings.local import local_embedding

    embed_model = local_embedding()
    asked = spec.meeting_questions()
    rows: list[dict] = []
    vocabulary: dict = {"indexes": {}}
    for name in spec.meetings:
        index, _ = meeting_index(load(name), folder / name, embed_model, relevance=None)
        try:
            questions = [q for meeting, q, _ in asked if meeting == name]
            rows += [{**r, "index": name} for r in ungated_hits(index, questions)]
            vocabulary["identity"] = index.identity
            vocabulary["indexes"][name] = index_words(index)
        finally:
            index.close()
    return rows, vocabulary


def ungated_hits(index, asked: Sequence[Question]) -> list[dict]:
    """Each question's hits from ``index`` (opened without a gate), as cached."""
    from llama_index_video.search.relevance import hit_text
    from llama_index_video.search.searcher import VideoSearcher

    policy = index.search_policy()
    searcher = VideoSearcher(
        retriever=policy.retriever(top_k=TOP_K),
        postprocessors=[index.postprocessor()],
        locate=policy.locate,
    )
    rows = []
    for question in asked:
        found = searcher.findings(question.question)
        rows.append(
            {
                "id": question.id,
                "question": question.question,
                "hits": [
                    {
                        "file": Path(f.hit.source).name,
                        "start": f.hit.start,
                        "end": f.hit.end,
                        "score": f.hit.score,
                        "fused": None if f.node.score is None else round(f.node.score, 4),
                        "text": hit_text(f.hit),
                        "modality": f.hit.modality,
                    }
                    for f in found
                ],
            }
        )
    return rows


def index_words(index) -> dict:
    """The index's vocabulary as cached: its units and each word's document frequency."""
    snapshot = index.lexical.snapshot()
    return {
        "units": len(snapshot.ids) if snapshot else 0,
        "frequencies": dict(sorted(snapshot.frequencies.items())) if snapshot else {},
    }


@dataclass(frozen=True)
class Cached:
    """One set as cached: its questions with their hits, the embedding model's
    identity (each model has its own calibration) and each index's vocabulary (by
    :attr:`Row.index`; a set of one index: under ``""``)."""

    rows: list[Row]
    identity: str
    vocabularies: dict[str, Vocabulary]


def set_key(name: str) -> str:
    """A question set's name as its cache file's and index folder's name."""
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def cached(spec: QuestionSet, cache: Path, index_root: Path, *, refresh: bool) -> Cached:
    key = set_key(spec.name)
    path = cache / f"{key}.json"
    stored = json.loads(path.read_text()) if path.exists() and not refresh else {}
    same = False
    if "vocabulary" in stored and stored["threshold"] == default_threshold(stored):
        timeline = {k: (v[0], v[1]) for k, v in stored["timeline"].items()}
        questions, _, _ = spec.load(timeline)
        asked = {q.id: q.question for q in questions}
        same = {r["id"]: r["question"] for r in stored["rows"]} == asked
    if not same:
        rows, made, vocabulary = collect(spec, index_root / key)
        questions, _, _ = spec.load(made)
        stored = {
            "set": spec.name,
            "threshold": DEFAULT_THRESHOLDS.get(vocabulary["identity"]),
            "timeline": made,
            "vocabulary": vocabulary,
            "rows": rows,
        }
        cache.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=0, ensure_ascii=False) + "\n")
    by_id = {r["id"]: r for r in stored["rows"]}
    words = stored["vocabulary"]
    vocabularies = {
        name: Vocabulary.of(index["frequencies"], index["units"])
        for name, index in words.get("indexes", {"": words}).items()
    }
    spans = spec.spans()
    rows = []
    for q in questions:
        asked_of = by_id[q.id].get("index", "")
        hits = tuple(Hit(**h) for h in by_id[q.id]["hits"])
        absent = vocabularies[asked_of].absent(q.question)
        rows.append(Row(q, hits, absent, spans.get(q.id, ()), asked_of))
    return Cached(rows, words["identity"], vocabularies)


def default_threshold(stored: dict) -> float | None:
    """The least cosine of a hit for the embedding model of a cached set: the hits a
    re-fit reads must have passed the threshold search applies now."""
    return DEFAULT_THRESHOLDS.get(stored["vocabulary"]["identity"])
