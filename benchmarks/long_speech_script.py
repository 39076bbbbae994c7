"""The long recordings of ``benchmarks/long_speech.py``: what is said, by whom, and when.

A recording of a given length is planned from a seed: paragraphs of prose read by
several espeak-ng voices at several speeds (the prose is the Python Language
Reference's topic help, ``pydoc_data.topics``, shipped with every Python: about eight
hours of varied sentences, with code lines left out), with ``FACTS`` spoken at known
times inside a paragraph, each fact's near-topic distractor elsewhere, long silences,
stretches of music, and music or noise beds under some speech. The plan is pure (unit
tested); :func:`synthesise` writes it as 16 kHz mono WAV, one item at a time (no whole
recording in memory), and returns where each fact was said: from the first to the
last sample of the fact's own speech. All speech is synthetic (espeak-ng).
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import subprocess
import wave
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16_000
VOICES = (
    "en-us",
    "en-gb",
    "en-gb-scotland",
    "en-029",
    "en-us+f3",
    "en-gb-x-rp+f2",
    "en-us-nyc+m3",
    "en-gb-x-gbcwmd",
)
SPEEDS = (145, 155, 165, 175)
SENTENCE_GAP = 0.3
"""Seconds between sentences one voice reads in a row (a fact inside its paragraph)."""
PLAN_VERSION = "1"
"""Bump when the plan or the synthesis changes: cached recordings are keyed on it."""


@dataclass(frozen=True)
class Fact:
    id: str
    sentence: str
    question: str
    answer: tuple[str, ...]
    distractor: str


FACTS = (
    Fact(
        "chess",
        "The chess club meets for practice every Thursday evening in the basement of the "
        "old library.",
        "On which day does the chess club practise?",
        ("thursday",),
        "The drama society rehearses every Tuesday afternoon in the school hall.",
    ),
    Fact(
        "sister_city",
        "Our sister city is Reykjavik, and a delegation from there visits us every spring.",
        "Which city is our sister city?",
        ("reykjavik",),
        "The regional airport added direct flights to Lisbon and Dublin last year.",
    ),
    Fact(
        "bridge",
        "The new bridge over the river is four hundred and twenty metres long.",
        "How long is the new bridge over the river?",
        ("four hundred and twenty", "420"),
        "The old ferry across the estuary takes about twenty minutes each way.",
    ),
    Fact(
        "bakery",
        "The bakery on Mill Street opens at half past six in the morning on weekdays.",
        "What time does the bakery on Mill Street open?",
        ("half past six", "6 30", "six thirty"),
        "The butcher next door closes early on Saturdays, at one o'clock.",
    ),
    Fact(
        "clinic",
        "Doctor Amara Okafor will lead the vaccination clinic at the community centre.",
        "Who will lead the vaccination clinic?",
        ("okafor",),
        "The dental check ups are run by a visiting team from the university hospital.",
    ),
    Fact(
        "marathon",
        "The marathon route was changed, so the runners now finish in Victoria Park.",
        "Where do the marathon runners finish now?",
        ("victoria park",),
        "The cycling race will start near the railway station and loop around the harbour.",
    ),
    Fact(
        "telescope",
        "The library lends out telescopes, and each one may be borrowed for two weeks.",
        "For how long can you borrow a telescope from the library?",
        ("two weeks", "2 weeks"),
        "Board games from the toy library must be returned within five days.",
    ),
    Fact(
        "glass",
        "The recycling lorry collects glass bottles on the first Monday of every month.",
        "When are glass bottles collected for recycling?",
        ("first monday", "1st monday"),
        "Garden waste is picked up every other Wednesday from April to October.",
    ),
    Fact(
        "violinist",
        "The orchestra's principal violinist, Henrik Larsen, has played with them for "
        "thirty years.",
        "Who is the orchestra's principal violinist?",
        ("larsen",),
        "The choir is conducted by a retired music teacher who moved here from Wales.",
    ),
    Fact(
        "pool",
        "The swimming pool stays closed until the ninth of October for repairs to its roof.",
        "Until when is the swimming pool closed?",
        ("ninth of october", "9th of october", "october 9"),
        "The ice rink reopens next weekend after its annual cleaning.",
    ),
    Fact(
        "festival",
        "Tickets for the harvest festival cost twelve pounds for adults and nothing for children.",
        "How much does an adult ticket for the harvest festival cost?",
        ("twelve pounds", "12 pounds", "12"),
        "Parking at the county show costs five pounds per car for the whole day.",
    ),
    Fact(
        "volcano",
        "The volcano tour departs from the north pier at a quarter past nine.",
        "Where does the volcano tour depart from?",
        ("north pier",),
        "The whale watching boats leave from the southern marina after lunch.",
    ),
    Fact(
        "canoe",
        "The museum's oldest exhibit is a wooden canoe that is about three thousand years old.",
        "What is the oldest exhibit in the museum?",
        ("canoe",),
        "The gallery upstairs shows paintings of the coast from the nineteenth century.",
    ),
    Fact(
        "robot",
        "The school's robotics team won the national championship with a robot called Pebble.",
        "What was the robotics team's robot called?",
        ("pebble",),
        "The debating team reached the semi final of the regional competition.",
    ),
    Fact(
        "saffron",
        "Our community garden grows saffron in a small greenhouse behind the church.",
        "Which spice does the community garden grow?",
        ("saffron",),
        "The allotments by the canal are known for their large pumpkins and leeks.",
    ),
    Fact(
        "night_bus",
        "The night bus number forty seven runs every half hour until three in the morning.",
        "Until what time does the night bus run?",
        ("three in the morning", "3 in the morning", "3 a m"),
        "The first tram of the day leaves the depot at a quarter past five.",
    ),
)
UNANSWERABLE = (
    "How many members does the sailing club have?",
    "Which architect designed the new concert hall?",
    "What flavour of cake won the baking competition?",
    "How tall is the lighthouse on the headland?",
    "Who is the captain of the town's cricket team?",
)


@dataclass(frozen=True)
class Item:
    """One stretch of the recording.

    ``kind``: ``speech`` (``text`` read by ``voice`` at ``speed`` words a minute, over
    ``bed`` if not ``none``), ``silence`` or ``music`` (``seconds`` of it). ``fact`` is
    the fact id of a fact's sentence; ``gap`` the seconds of silence after the item.
    """

    kind: str
    text: str = ""
    voice: str = ""
    speed: int = 0
    bed: str = "none"
    seconds: float = 0.0
    fact: str = ""
    gap: float = 0.0


def prose() -> list[str]:
    """Paragraphs of prose from Python's topic help: no code lines, no markup."""
    from pydoc_data.topics import topics

    paragraphs = []
    for name in sorted(topics):
        for block in re.split(r"\n\s*\n", topics[name]):
            lines = block.splitlines()
            if not lines or any(
                line.startswith(("   ", "\t", ">>>", "*", "-", "=")) for line in lines
            ):
                continue
            text = " ".join(" ".join(lines).split())
            text = re.sub(r"[`*_|\[\]{}<>\"]", "", text)
            letters = sum(c.isalpha() or c.isspace() for c in text)
            if 150 <= len(text) <= 2500 and letters / len(text) > 0.9 and text.endswith("."):
                paragraphs.append(text)
    return paragraphs


def sentences(paragraph: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", paragraph) if s]


def plan(minutes: float, seed: int = 22, paragraphs: Sequence[str] | None = None) -> list[Item]:
    """The items of a recording of about ``minutes``, with every fact and distractor.

    Facts are spread evenly over the recording, each inside a paragraph of one voice
    (after its first sentence); each distractor is placed about a third of the recording
    away from its fact. Every tenth item or so is a long silence (20-60 s) or music
    (15-40 s); about one paragraph in five has a music or noise bed.
    """
    rng = random.Random(seed)
    pool = list(paragraphs if paragraphs is not None else prose())
    rng.shuffle(pool)
    words_per_second = 2.5  # espeak at ~150 words a minute
    total = minutes * 60
    slots = len(FACTS)
    fact_at = {i: FACTS[i] for i in range(slots)}
    distractor_at = {(i + slots // 3) % slots: FACTS[i] for i in range(slots)}
    items: list[Item] = []
    elapsed = 0.0
    next_slot = 0
    paragraph = 0
    while elapsed < total or next_slot < slots:
        voice, speed = rng.choice(VOICES), rng.choice(SPEEDS)
        roll = rng.random()
        if roll < 0.05:
            seconds = rng.uniform(20, 60)
            items.append(Item("silence", seconds=round(seconds, 1)))
            elapsed += seconds
            continue
        if roll < 0.10:
            seconds = rng.uniform(15, 40)
            items.append(Item("music", seconds=round(seconds, 1), gap=1.0))
            elapsed += seconds + 1.0
            continue
        bed = rng.choice(("music", "noise")) if rng.random() < 0.2 else "none"
        said = sentences(pool[paragraph % len(pool)])
        paragraph += 1
        due = next_slot < slots and elapsed >= next_slot * total / slots
        inserted: list[tuple[str, str]] = []  # (text, fact id)
        if due:
            inserted.append((fact_at[next_slot].sentence, fact_at[next_slot].id))
            distractor = distractor_at.get(next_slot)
            if distractor is not None:
                inserted.append((distractor.distractor, ""))
            next_slot += 1
        lines = [(s, "") for s in said]
        for offset, extra in enumerate(inserted):
            lines.insert(min(len(lines), 1 + 2 * offset), extra)
        for index, (text, fact) in enumerate(lines):
            last = index == len(lines) - 1
            gap = rng.uniform(0.8, 2.5) if last else SENTENCE_GAP
            items.append(Item("speech", text, voice, speed, bed, fact=fact, gap=round(gap, 2)))
            elapsed += len(text.split()) / words_per_second + gap
    return items


def digest(items: Sequence[Item]) -> str:
    """A short key of the plan and the synthesis version (the cache name)."""
    payload = json.dumps([PLAN_VERSION, *map(asdict, items)], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def synthesise(items: Sequence[Item], path: Path) -> dict[str, tuple[float, float]]:
    """Write ``items`` to ``path`` (16 kHz mono WAV); ``{fact id: (start, end)}`` in seconds.

    A fact's times are those of its first and last audible sample. Written one item
    at a time; the returned times are also saved next to the WAV as JSON.
    """
    rng = np.random.default_rng(22)
    facts: dict[str, tuple[float, float]] = {}
    written = 0
    partial = path.with_suffix(".partial.wav")
    with wave.open(str(partial), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        for item in items:
            audio = _audio(item, rng)
            if item.fact:
                loud = np.flatnonzero(np.abs(audio) > 0.02)
                if len(loud):
                    facts[item.fact] = (
                        round((written + loud[0]) / SAMPLE_RATE, 3),
                        round((written + loud[-1]) / SAMPLE_RATE, 3),
                    )
            audio = np.concatenate([audio, np.zeros(int(item.gap * SAMPLE_RATE), np.float32)])
            out.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())
            written += len(audio)
    partial.replace(path)
    path.with_suffix(".json").write_text(
        json.dumps({"facts": facts, "seconds": written / SAMPLE_RATE})
    )
    return facts


def _audio(item: Item, rng: np.random.Generator) -> np.ndarray:
    samples = int(item.seconds * SAMPLE_RATE)
    if item.kind == "silence":
        return np.zeros(samples, np.float32)
    if item.kind == "music":
        return _music(samples, rng, level=0.25)
    speech = _speak(item.text, item.voice, item.speed)
    if item.bed == "music":
        speech = speech + _music(len(speech), rng, level=0.05)
    elif item.bed == "noise":
        speech = speech + rng.normal(0, 0.015, len(speech)).astype(np.float32)
    return speech


def _speak(text: str, voice: str, speed: int) -> np.ndarray:
    from scipy.signal import resample_poly

    done = subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(speed), "--stdout", text],
        capture_output=True,
        check=True,
        timeout=120,
    )
    with wave.open(io.BytesIO(done.stdout)) as handle:
        rate = handle.getframerate()
        raw = handle.readframes(handle.getnframes())
    audio = np.frombuffer(raw, "<i2").astype(np.float32) / 32768
    return resample_poly(audio, SAMPLE_RATE, rate).astype(np.float32)


def _music(samples: int, rng: np.random.Generator, *, level: float) -> np.ndarray:
    """Chords of sine tones changing every two seconds, with a soft attack."""
    out = np.zeros(samples, np.float32)
    step = 2 * SAMPLE_RATE
    t = np.arange(step) / SAMPLE_RATE
    envelope = np.minimum(1.0, t / 0.1) * np.exp(-t / 1.5)
    for start in range(0, samples, step):
        root = 110 * 2 ** (rng.integers(0, 12) / 12)
        chord = sum(np.sin(2 * np.pi * root * ratio * t) for ratio in (1, 1.26, 1.5, 2))
        piece = (chord * envelope * level / 4).astype(np.float32)
        out[start : start + step] = piece[: samples - start]
    return out


def iter_facts(timeline: dict[str, tuple[float, float]]) -> Iterator[tuple[Fact, float, float]]:
    for fact in FACTS:
        if fact.id in timeline:
            start, end = timeline[fact.id]
            yield fact, start, end
