"""Which language is spoken where: cheap language identification before transcription.

An English-only model (``tiny.en``) writes English words whatever it hears, so a German
meeting became English nonsense and a Spanish one a repetition loop. Before such a model
transcribes anything, a multilingual Whisper model's language-identification head listens
to a few probes of the audio; speech found not to be English is transcribed by a
multilingual model, or refused (see :class:`~.faster.FasterWhisperTranscriber`).

How. The speech is cut into blocks of about six seconds of speech
(:mod:`.speech_blocks`). A block is probed in pieces: consecutive
utterances (each with edges of silence) joined until they hold :data:`SURE_SPEECH_S` of
speech, each piece identified whole, the probabilities averaged, weighted by speech.
Each piece is encoded at its own length rather than padded to Whisper's 30 s window:
CTranslate2 accepts shorter inputs, the head reads them as well (0.98-0.99 on 10 s
English and Spanish probes), and a 10 s probe costs about 0.13 CPU s with ``base`` where
a padded window costs 1 CPU s. Pieces rather than single utterances: real meetings talk
in utterances of 0.7-2 s, on which the head wanders (English at 0.03-0.5, Japanese,
Korean or Indonesian first, in the AMI excerpts of ``tests/fixtures/real_speech``);
heard 2.5 s at a time the same speech is surer English (``ami_trn08``: 0.46 -> 0.76),
fewer blocks need writing down (7 -> 5 on those 15 files) and the check costs a quarter
less there (11.1 -> 8.2 CPU s, 82 -> 45 calls), with the same language found for every
recording of ``benchmarks/language_check.py --held-out``. At most :data:`FIRST_PROBES`
evenly spaced blocks are probed; only where two probes disagree are the blocks between
them probed, by bisection, up to :data:`MAX_PROBES` blocks or :data:`PROBED_SHARE` of
them, whichever is more. A stretch in another language lying wholly between two probes
of one language is therefore not seen: a recording that switches language briefly is
labelled with its main language. The share: a recording that changes language often
needs a probe on each side of each change, and twelve were too few for the last two
minutes of the 11-minute recording of :mod:`.speech_blocks` heard whole (nine readings
in eight languages, 60 blocks): the Portuguese reading, never probed, went to the
Japanese and Chinese ones round it; 16 probes found it. A recording in one language
costs no more: its first probes agree.

English costs least. A block's pieces are heard in order, and once :data:`SURE_SPEECH_S`
of its speech has been heard English at :data:`SURE_ENGLISH` or more, the rest of the
block is not heard: an English recording mostly costs one piece per probe. Only English
stops a block early (no single utterance of the German, Spanish and French fixtures,
human or synthetic, reached 0.4 English, against 0.7 here and 0.5 for a whole block), so
speech in other languages is heard as before. Measured (``benchmarks/language_check.py``,
shared 2-core machine, CPU seconds): 0.34-0.75 s per English example file of 40-80 s
(0.72-1.14 s when every block was heard whole), against 1.6-4.9 s for ``tiny.en`` to
transcribe it; the probes do not grow with length. The VAD (0.1-0.2 s per file) is the
transcription's own (:mod:`.vad`).

A probe counts as English when English has probability :data:`ENGLISH_FLOOR` or more
(English blocks measured 0.51-1.0 on the example media; synthetic German, Spanish and
French 0.0-0.3): "not English" is the decision that matters for an English-only model,
and the label is then the most probable other language, unless that one is less than
half as probable as English (:data:`OTHER_OVER_ENGLISH`): espeak-ng's English voices
often sound Latin to the head (0.5-0.84, English second at 0.04-0.3) and with Latin
excluded the "most probable other" was Welsh at 0.01-0.03, so minutes of a synthetic
English recording went to the multilingual model as Welsh and came back as nonsense
("A Clos Instance ...") or not at all; the German, Spanish and French fixtures, human
and synthetic, keep their language (at 1.6 times English's probability or more).
Single utterances mislead the head (a 2.5 s English sentence came out Thai at 0.87,
which made half of an English example "Thai" when blocks were labelled alone), so a
block may only take a language that the probes together point to or that one block
heard decisively (:data:`DECISIVE`). Latin is never chosen unless asked for
(``languages``): the head confuses unclear speech with it (synthetic German came out
Latin at 0.32, German third) and almost no recording is in Latin.

A block found not to be English, or heard as English at under :data:`ENGLISH_FLOOR`, is
then confirmed by writing it down (with ``confirm``, e.g. :func:`whisper_confirmer`): the
multilingual model transcribes up to :data:`CONFIRM_SPEECH_S` of the block's speech
greedily, told English and each of the block's :data:`CONFIRM_OTHERS` likeliest other
languages. The block is English if English's text is the most probable (average log
probability per token) of those that do not loop; otherwise the head's language stands,
or, where the head said English, the best-written other language. The head alone
mistook real English for other languages: in the AMI meeting excerpts of
``tests/fixtures/real_speech`` (English, many speakers not native, far-field), 11 s of
``ami_tst00`` came out German at 0.95 and 24 s of ``ami_trn08`` Welsh at 0.33 (heard
utterance by utterance; in pieces the head finds it English), and were transcribed as
German and as Welsh nonsense ("Mae'r gweithio'r gweithio"). And on
synthetic speech in languages the rules were not tuned on (espeak-ng, 10-13 s each of
German, Dutch, Portuguese, Polish, Russian, Swedish, Turkish, Italian) it put English on
six of the eight. Written down, every English recording we have stays English (23, 16 of
them real), every German, Spanish and French fixture keeps its language, and of those
eight only 3.4 s of the Dutch stay English (docs/evaluation.md). Writing is a poorer
judge among other languages than the head (it took the synthetic French for Japanese),
so it only decides English or not. Only :data:`CONFIRM_TOKENS` tokens are written per
language: given more, a short input often ends in a loop ("Und Und Und ...", "Mae'n
gweithio'r gweithio'r ...") whose tokens are each very probable, and the comparison then
favoured whichever language looped. Even 24 tokens can loop, too briefly for the
compression ratio to show it: told English, ``base`` wrote a block of real Portuguese as
"the pyramids, the pyramids, the pyramids," on a CPU without AVX, and that writing won;
so a writing that repeats a phrase (:func:`~.loops.repeats_a_phrase`) loops too. With
it, no recording of real non-English speech (``tests/fixtures/real_languages``: seven
languages, held out until that Portuguese showed the loop) comes out English on either
instruction set. Confirming costs about 0.3-0.6 CPU s per block written down (the four
writings in one batch, :func:`whisper_confirmer`), and nothing for a block surely
English.

A change of language needs the head's word too: a run of blocks in one language next to
a run in another keeps its language only when the head heard it there at
:data:`CHANGE_OVER_NEIGHBOUR` of the neighbour's language or more (averaged over the
run's probed blocks); otherwise the neighbour's language holds. Only writing down can
break this (the head's own choices always pass): the tail of a real Portuguese reading
(``pt_fleurs``), heard Portuguese at 0.63 and English at 0.07, was written best in
English on an AVX-512 Xeon, because told Portuguese ``base`` looped ("a sua vida, a sua
vida, a sua vida,"), and became a stretch of English; under ``CT2_FORCE_CPU_ISA=GENERIC``
the same writing did not loop and Portuguese won by 0.04 (log probability per token). A
recording that writing down finds English throughout (the AMI excerpt whose first 11 s
the head hears as German at 0.95) has no change to refuse, and keeps its English.

Between two neighbouring blocks that disagree, the change is placed at a pause
(:func:`~.speech_blocks.change_at`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from llama_index_video.transcription.base import SAMPLE_RATE
from llama_index_video.transcription.loops import text_loops
from llama_index_video.transcription.speech_blocks import (
    MIN_BLOCK_SPEECH_S,
    blocks_of,
    change_at,
    groups,
    speech,
    split_utterances,
)
from llama_index_video.transcription.vad import UTTERANCES, Span, VoiceActivity

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

FIRST_PROBES: Final = 3
MAX_PROBES: Final = 12
PROBED_SHARE: Final = 1 / 3
"""Up to this share of the blocks may be probed, when that is more than
:data:`MAX_PROBES` (see the module docstring)."""
EDGE_S: Final = 0.2
"""Silence kept on each side of an utterance when it is identified."""
ENGLISH_FLOOR: Final = 0.5
SURE_ENGLISH: Final = 0.7
"""A block whose first :data:`SURE_SPEECH_S` of speech are English at this probability or
more is not listened to further (see the module docstring)."""
SURE_SPEECH_S: Final = 2.5
DECISIVE: Final = 0.5
OTHER_OVER_ENGLISH: Final = 0.5
"""Under :data:`ENGLISH_FLOOR`, another language wins only at this fraction of English's
probability or more (see the module docstring)."""
CONFIRM_SPEECH_S: Final = 10.0
"""At most this much of a block's speech is written down to confirm its language."""
CONFIRM_OTHERS: Final = 3
"""A block is written down in English and in this many of its likeliest other languages."""
CONFIRM_TOKENS: Final = 24
"""Tokens written per language to confirm a block's language (see the module docstring)."""
CHANGE_OVER_NEIGHBOUR: Final = 0.5
"""A run of blocks differing from its neighbour keeps its language only when the head
heard it at this fraction of the neighbour's language or more (see the module docstring)."""
UNLIKELY: Final = frozenset({"la"})
"""Languages chosen only when asked for (see the module docstring)."""

NAMES: Final = {
    "ar": "Arabic",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "hu": "Hungarian",
    "id": "Indonesian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "la": "Latin",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sv": "Swedish",
    "th": "Thai",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "vi": "Vietnamese",
    "zh": "Chinese",
}
_CODES_BY_NAME: Final = {name.lower(): code for code, name in NAMES.items()}
"""NAMES the other way: a language as people name it, lower-cased, to its code."""


def language_name(code: str) -> str:
    """``"de"`` -> ``"German (de)"``; an unlisted code as it is."""
    name = NAMES.get(code)
    return f"{name} ({code})" if name else code


def language_code(given: str) -> str:
    """A language as people write it, as the Whisper code it means: ``SV``, ``sv-SE``,
    ``pt_BR`` and ``Swedish`` are ``sv`` and ``pt``; anything else is lower-cased as
    written (for the transcriber to refuse, or a search to find no moment in)."""
    written = given.strip().lower()
    return _CODES_BY_NAME.get(written) or written.replace("_", "-").split("-")[0]


def language_codes(text: str) -> list[str]:
    """``"fr, German"`` -> ``["fr", "de"]`` (:func:`language_code` of each).

    Raises:
        ValueError: no language is given.
    """
    codes = list(dict.fromkeys(language_code(part) for part in text.split(",") if part.strip()))
    if not codes:
        raise ValueError("name languages as fr, fr-FR or French, comma-separated")
    return codes


def unknown_languages(requested: Sequence[str], known: Iterable[str]) -> str | None:
    """Why a search of moments in ``requested`` languages (codes) can find nothing, given
    the languages the index holds (``known``, codes; a chapter's ``"fr+de"`` counts as
    both): one line naming those it holds; None when it holds every one."""
    held = sorted({code for spoken in known for code in spoken.split("+") if code})
    missing = [code for code in requested if code not in held]
    if not missing:
        return None
    if not held:
        return "no moment of this index has a language (documents and frames have none)"
    return (
        f"no moment of this index is in {', '.join(map(language_name, missing))}; "
        f"its languages: {', '.join(map(language_name, held))}"
    )


@dataclass(frozen=True)
class LanguageStretch:
    """A stretch of audio in one language; times in seconds on the audio's timeline.

    Attributes:
        start: Where the stretch begins (the first stretch begins at 0).
        end: Where it ends (the last one ends with the audio).
        language: Whisper language code.
        probability: The language head's probability for ``language``, averaged over the
            stretch's probed blocks.
    """

    start: float
    end: float
    language: str
    probability: float


Probabilities = dict[str, float]
Identify = Callable[[np.ndarray], Probabilities]
"""Language probabilities of some speech (16 kHz mono float32)."""
Confirm = Callable[[np.ndarray, Sequence[str]], str]
"""Which of the candidate languages some speech is written down best in."""


def whisper_identifier(whisper: WhisperModel) -> Identify:
    """Language identification by a multilingual faster-whisper model, unpadded (see module)."""

    def identify(speech: np.ndarray) -> Probabilities:
        ranked = whisper.model.detect_language(_encode(whisper, speech))[0]
        return {token[2:-2]: float(probability) for token, probability in ranked}

    return identify


def whisper_confirmer(whisper: WhisperModel) -> Confirm:
    """Which language some speech is best written in, by a multilingual faster-whisper
    model (see module): of the candidates, the one whose first :data:`CONFIRM_TOKENS`
    tokens, written greedily, are the most probable and do not loop; the first candidate
    when every one loops.

    The speech is encoded once and every candidate written in one batch: the same texts
    and scores as one call per candidate, for about 40 % less CPU (0.88 -> 0.54 CPU s
    for 10 s of speech and four candidates, 2-core AMD EPYC)."""
    import ctranslate2
    from faster_whisper.tokenizer import Tokenizer

    def confirm(speech: np.ndarray, candidates: Sequence[str]) -> str:
        encoded = np.asarray(_encode(whisper, speech, to_cpu=True))
        tokenizers = [
            Tokenizer(whisper.hf_tokenizer, True, task="transcribe", language=code)
            for code in candidates
        ]
        results = whisper.model.generate(
            ctranslate2.StorageView.from_array(
                np.ascontiguousarray(np.repeat(encoded, len(candidates), axis=0))
            ),
            [[*tokenizer.sot_sequence, tokenizer.no_timestamps] for tokenizer in tokenizers],
            beam_size=1,
            max_length=CONFIRM_TOKENS,
            return_scores=True,
        )
        # average log probability per token of each text, unless the text loops
        fluent = {
            code: float(result.scores[0])
            for code, tokenizer, result in zip(candidates, tokenizers, results, strict=True)
            if not text_loops(tokenizer.decode(result.sequences_ids[0]))
        }
        return max(fluent, key=fluent.__getitem__) if fluent else candidates[0]

    return confirm


def _encode(whisper: WhisperModel, speech: np.ndarray, *, to_cpu: bool = False) -> object:
    """The encoder's output for ``speech`` at its own length (up to 30 s), not padded."""
    import ctranslate2

    features = whisper.feature_extractor(speech)[:, : whisper.feature_extractor.nb_max_frames]
    return whisper.model.encode(
        ctranslate2.StorageView.from_array(np.ascontiguousarray(features[np.newaxis])),
        to_cpu=to_cpu,
    )


def decide(
    probabilities: Probabilities, languages: Collection[str] | None = None
) -> tuple[str, float]:
    """The language of a probe and its probability: English at :data:`ENGLISH_FLOOR` or
    above (when English is a candidate), else the most probable other candidate.

    ``languages`` are the candidates; None: every language but :data:`UNLIKELY`.
    """
    english = probabilities.get("en", 0.0)
    english_allowed = languages is None or "en" in languages
    if english_allowed and english >= ENGLISH_FLOOR:
        return "en", english
    others = {
        code: p for code, p in probabilities.items() if code != "en" and _allowed(code, languages)
    }
    if not others:
        return "en", english
    code = max(others, key=others.__getitem__)
    if english_allowed and others[code] < OTHER_OVER_ENGLISH * english:
        return "en", english
    return code, others[code]


def detect_stretches(
    samples: np.ndarray,
    identify: Identify,
    *,
    confirm: Confirm | None = None,
    languages: Collection[str] | None = None,
    utterances: Sequence[Span] | None = None,
    max_probes: int | None = None,
    settled: str | None = None,
) -> tuple[LanguageStretch, ...]:
    """The language of each stretch of ``samples``, covering it from 0 to its end.

    Args:
        samples: 16 kHz mono float32 audio.
        identify: Language probabilities of some speech (e.g. :func:`whisper_identifier`).
        confirm: Which of some candidate languages a block's speech is written best in
            (e.g. :func:`whisper_confirmer`), asked for each block not surely English
            (see the module docstring). None: the head's word stands. Not asked when
            English is not among ``languages``.
        languages: The candidate languages (see :func:`decide`).
        utterances: Where the speech is, split at short pauses
            (:data:`~.vad.UTTERANCES`); None runs the VAD.
        max_probes: At most this many blocks are probed; None: :data:`MAX_PROBES` or
            :data:`PROBED_SHARE` of the blocks, whichever is more.
        settled: The language the recording was heard in just before ``samples`` (a
            chunk of a live recording, :mod:`.recording_language`): a block only takes
            another one on strong evidence over enough speech (:func:`keeps_label`).

    Returns:
        Stretches in time order; none when the audio holds less than
        :data:`~.speech_blocks.MIN_SPEECH_S` of speech.
    """
    if utterances is None:
        utterances = VoiceActivity(samples).spans(UTTERANCES)
    spans = split_utterances(utterances)
    blocks = blocks_of(spans)
    if not blocks:
        return ()
    if max_probes is None:
        max_probes = max(MAX_PROBES, math.ceil(PROBED_SHARE * len(blocks)))
    heard: dict[tuple[int, ...], Probabilities] = {}  # by the utterance indices heard
    edge = round(EDGE_S * SAMPLE_RATE)

    def utterance(index: int) -> np.ndarray:
        """One utterance with its edges of silence."""
        start, end = spans[index]
        return samples[max(0, start - edge) : end + edge]

    def listen(*indices: int) -> Probabilities:
        """The head's probabilities for consecutive utterances heard together."""
        if indices not in heard:
            heard[indices] = identify(np.concatenate([utterance(i) for i in indices]))
        return heard[indices]

    probed: dict[int, Probabilities] = {}  # by block index

    english = languages is None or "en" in languages

    def probe(block: int) -> None:
        """The block's probabilities: its pieces (:func:`~.speech_blocks.groups`) heard in
        order, until the speech heard is surely English (:data:`SURE_ENGLISH`) or the block
        ends."""
        heard_here: list[Probabilities] = []
        mean: Probabilities = {}
        weights: list[int] = []
        for piece in groups(blocks[block], spans, SURE_SPEECH_S):
            heard_here.append(listen(*piece))
            weights.append(speech(piece, spans))
            mean = _mean(heard_here, weights)
            if (
                english
                and sum(weights) >= SURE_SPEECH_S * SAMPLE_RATE
                and mean.get("en", 0.0) >= SURE_ENGLISH
            ):
                break
        probed[block] = mean

    def said(block: int) -> str:
        return decide(probed[block], languages)[0]

    def block_speech(block: int) -> np.ndarray:
        """The block's first utterances, up to :data:`CONFIRM_SPEECH_S` of speech."""
        parts: list[np.ndarray] = []
        speech = 0
        for index in blocks[block]:
            if speech >= CONFIRM_SPEECH_S * SAMPLE_RATE:
                break
            parts.append(utterance(index))
            speech += spans[index][1] - spans[index][0]
        return np.concatenate(parts)

    for block in _spread(len(blocks), min(FIRST_PROBES, max_probes)):
        probe(block)
    while len(probed) < max_probes:
        pending = _disagreement(sorted(probed), said)
        if pending is None:
            break
        probe(pending)
    candidates = _candidates(probed, languages)
    decided = {b: decide(p, candidates)[0] for b, p in probed.items()}
    written_english: set[int] = set()
    if confirm is not None and english:
        for block, code in decided.items():
            heard_here = probed[block]
            if code != "en" or heard_here.get("en", 0.0) < ENGLISH_FLOOR:
                others = [c for c in heard_here if c != "en" and _allowed(c, languages)]
                best = confirm(block_speech(block), ["en", *others[:CONFIRM_OTHERS]])
                # English when written best in English; otherwise the head's language
                # stands (writing is a poorer judge among other languages than the head)
                decided[block] = best if "en" in (best, code) else code
                if best == "en":
                    written_english.add(block)
    if settled is not None:
        decided = {
            block: code
            if keeps_label(
                probed[block],
                code,
                settled,
                written_english=block in written_english,
                speech_s=speech(blocks[block], spans) / SAMPLE_RATE,
            )
            else settled
            for block, code in decided.items()
        }
    spoken = _fill(len(blocks), _held(decided, probed))
    stretches: list[LanguageStretch] = []
    first = 0
    for block in range(1, len(blocks) + 1):
        if block < len(blocks) and spoken[block] == spoken[first]:
            continue
        language = spoken[first]
        start = stretches[-1].end if stretches else 0.0
        end = len(samples) / SAMPLE_RATE
        if block < len(blocks):
            pair = (language, spoken[block])
            around = [*blocks[block - 1], *blocks[block]]
            later = [_nearer(listen(i), pair) == pair[1] for i in around]
            end = max(start, change_at(spans, around, later))
        scores = [probed[b].get(language, 0.0) for b in range(first, block) if b in probed]
        stretches.append(
            LanguageStretch(
                start=start,
                end=end,
                language=language,
                probability=round(sum(scores) / len(scores), 3) if scores else 0.0,
            )
        )
        first = block
    return tuple(stretches)


def _candidates(
    probed: dict[int, Probabilities], languages: Collection[str] | None
) -> Collection[str]:
    """The languages a block may be labelled with: those given, else English, the
    language of all the probes together, and each heard decisively (at
    :data:`DECISIVE` or more) in a block. A block heard only vaguely then takes the
    likelier of these rather than a language no block was sure of."""
    if languages is not None:
        return languages
    pooled = _mean(list(probed.values()), [1] * len(probed))
    found = {"en", decide(pooled)[0]}
    for probabilities in probed.values():
        code, probability = decide(probabilities)
        if probability >= DECISIVE:
            found.add(code)
    return found


def _held(decided: dict[int, str], probed: dict[int, Probabilities]) -> dict[int, str]:
    """``decided``, but a run of probed blocks in one language that the head heard, on
    average over the run, at under :data:`CHANGE_OVER_NEIGHBOUR` of a neighbouring run's
    language takes that language; the weakest such run first, one at a time, until every
    change of language left has the head's word."""
    order = sorted(decided)
    spoken = [decided[block] for block in order]
    for _ in range(len(order)):  # each pass joins a run to its neighbour: fewer runs
        runs = [list(run) for _, run in itertools.groupby(range(len(order)), spoken.__getitem__)]
        weak: list[tuple[float, int, str]] = []  # (own / neighbour's, run, neighbour's)
        for index, run in enumerate(runs):
            heard = _mean([probed[order[i]] for i in run], [1] * len(run))
            own = heard.get(spoken[run[0]], 0.0)
            for neighbour in (index - 1, index + 1):
                if 0 <= neighbour < len(runs):
                    theirs = heard.get(spoken[runs[neighbour][0]], 0.0)
                    if own < CHANGE_OVER_NEIGHBOUR * theirs:
                        weak.append((own / theirs, index, spoken[runs[neighbour][0]]))
        if not weak:
            break
        _, index, language = min(weak)
        for i in runs[index]:
            spoken[i] = language
    return dict(zip(order, spoken, strict=True))


def keeps_label(
    heard: Probabilities, code: str, settled: str, *, written_english: bool, speech_s: float
) -> bool:
    """Whether a block labelled ``code`` keeps it in a recording heard in ``settled`` so far
    (:mod:`.recording_language`): over :data:`~.speech_blocks.MIN_BLOCK_SPEECH_S` of speech
    or more, heard in ``code`` at :data:`DECISIVE` or more, or written best in English and
    heard English at :data:`CHANGE_OVER_NEIGHBOUR` of ``settled`` or more (as a run of
    blocks next to another language keeps English, :func:`_held`)."""
    if code == settled:
        return True
    if speech_s < MIN_BLOCK_SPEECH_S:
        return False
    if heard.get(code, 0.0) >= DECISIVE:
        return True
    return written_english and heard.get("en", 0.0) >= CHANGE_OVER_NEIGHBOUR * heard.get(
        settled, 0.0
    )


def _allowed(code: str, languages: Collection[str] | None) -> bool:
    """Whether ``code`` is a candidate: one of ``languages``, else any but :data:`UNLIKELY`."""
    return code in languages if languages is not None else code not in UNLIKELY


def _nearer(probabilities: Probabilities, pair: tuple[str, str]) -> str:
    """Which of ``pair`` an utterance sounds like: with English one of them, English
    when it reaches :data:`ENGLISH_FLOOR` (as :func:`decide` has it), else the likelier
    of the two (the first on a tie)."""
    before, after = pair
    if "en" in pair:
        english = probabilities.get("en", 0.0) >= ENGLISH_FLOOR
        return "en" if english else (after if before == "en" else before)
    return after if probabilities.get(after, 0.0) > probabilities.get(before, 0.0) else before


def _mean(heard: Sequence[Probabilities], weights: Sequence[int]) -> Probabilities:
    total = sum(weights) or 1
    mean: Probabilities = {}
    for probabilities, weight in zip(heard, weights, strict=True):
        for code, p in probabilities.items():
            mean[code] = mean.get(code, 0.0) + p * weight / total
    return dict(sorted(mean.items(), key=lambda item: -item[1]))


def _spread(count: int, probes: int) -> list[int]:
    """``probes`` block indices spread evenly over ``count``, first and last included."""
    if count <= probes:
        return list(range(count))
    if probes <= 1:
        return [0]
    return sorted({round(i * (count - 1) / (probes - 1)) for i in range(probes)})


def _disagreement(order: list[int], said: Callable[[int], str]) -> int | None:
    """A block between two neighbouring probed blocks that disagree, if one is unprobed."""
    for left, right in itertools.pairwise(order):
        if right - left > 1 and said(left) != said(right):
            return (left + right) // 2
    return None


def _fill(count: int, decided: dict[int, str]) -> list[str]:
    """A language for every block: an unprobed block takes its nearest probe's (the
    earlier one on a tie), so an undecided boundary falls half-way."""
    order = sorted(decided)
    return [
        decided[min(order, key=lambda probe: (abs(probe - index), probe))] for index in range(count)
    ]
