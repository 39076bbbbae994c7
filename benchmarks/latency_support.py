"""Pure helpers of the search latency benchmark, unit-tested in tests/benchmarks.

Two things live here, both free of the library so they can be tested in isolation:

* latency statistics (:func:`summarise`): percentiles by linear interpolation between
  the closest ranks, the method of ``numpy.percentile``'s default;
* synthetic speech (:class:`SpeechGenerator`): varied lecture- and meeting-style
  sentences on a dozen topics, timed at a speaking rate, and queries about them. The
  benchmark turns the sentences into ``Segment``s and lets the library's own unit
  builder regroup them, so the transcript units look like a real ingest's.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class LatencySummary:
    """Latencies of one variant, in milliseconds."""

    count: int
    mean: float
    p50: float
    p95: float
    p99: float
    max: float


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ascending values, interpolating linearly.

    Rank ``(n - 1) * q / 100`` is split into its whole and fractional parts, and the
    two neighbouring values are blended (as ``numpy.percentile``'s default does).
    """
    if not sorted_values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within 0-100, got {q}")
    rank = (len(sorted_values) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = rank - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def summarise(seconds: Sequence[float]) -> LatencySummary:
    """Mean, p50, p95, p99 and max of durations given in seconds, in milliseconds."""
    if not seconds:
        raise ValueError("no latencies to summarise")
    ms = sorted(s * 1000.0 for s in seconds)
    return LatencySummary(
        count=len(ms),
        mean=sum(ms) / len(ms),
        p50=percentile(ms, 50),
        p95=percentile(ms, 95),
        p99=percentile(ms, 99),
        max=ms[-1],
    )


# ----------------------------------------------------------------------- synthetic speech


@dataclass(frozen=True)
class Topic:
    """Vocabulary of one subject; sentences and queries are drawn from it."""

    name: str
    things: tuple[str, ...]
    places: tuple[str, ...]
    units: tuple[str, ...]
    actions: tuple[str, ...]


def _topic(name: str, things: str, places: str, units: str, actions: str) -> Topic:
    """A topic from "; "-separated word lists."""
    return Topic(name, _words(things), _words(places), _words(units), _words(actions))


def _words(listed: str) -> tuple[str, ...]:
    return tuple(listed.split("; "))


TOPICS: tuple[Topic, ...] = (
    _topic(
        "atmosphere",
        (
            "ozone layer; stratosphere; ultraviolet radiation; jet stream; cloud cover; "
            "water vapour; air pressure; ozone hole; temperature profile; aerosol layer"
        ),
        "Antarctica; the tropics; Halley Bay; the Arctic; the upper troposphere",
        "kilometres; Dobson units; degrees Celsius; hectopascals",
        "measure; model; monitor; compare; calibrate; sample",
    ),
    _topic(
        "oceans",
        (
            "Gulf Stream; thermohaline circulation; sea surface temperature; salinity; coral reef; "
            "plankton bloom; tidal range; ocean current; sea level; deep water"
        ),
        "the North Atlantic; the Pacific; the Southern Ocean; the coastal shelf; the Mediterranean",
        "metres; knots; parts per thousand; millimetres per year",
        "track; survey; map; measure; forecast; sample",
    ),
    _topic(
        "payments",
        (
            "checkout page; payment form; card validation; fraud check; refund queue; "
            "shopping cart; order total; retry logic; payment gateway; error rate"
        ),
        "the staging server; the mobile app; the EU region; the support desk; the new build",
        "milliseconds; requests per second; percent of orders; euros",
        "deploy; roll back; test; debug; refactor; monitor",
    ),
    _topic(
        "databases",
        (
            "query planner; primary key; write ahead log; index scan; replication lag; "
            "connection pool; vacuum job; foreign key; schema migration; read replica"
        ),
        (
            "the primary node; the analytics cluster; production; the nightly backup; "
            "the test database"
        ),
        "milliseconds; gigabytes; rows; connections",
        "migrate; index; tune; partition; back up; benchmark",
    ),
    _topic(
        "machine learning",
        (
            "training loss; learning rate; validation set; embedding model; attention layer; "
            "batch size; gradient norm; test accuracy; tokenizer; feature store"
        ),
        "the GPU cluster; the notebook; the evaluation run; the baseline model; the data pipeline",
        "epochs; percent; tokens; parameters",
        "train; evaluate; fine tune; regularise; deploy; profile",
    ),
    _topic(
        "cardiology",
        (
            "heart rate; blood pressure; left ventricle; ejection fraction; arrhythmia; "
            "cholesterol level; stent; beta blocker; echocardiogram; coronary artery"
        ),
        (
            "the clinic; the intensive care unit; the trial cohort; the emergency room; "
            "the follow up visit"
        ),
        "beats per minute; millimetres of mercury; milligrams; percent",
        "diagnose; treat; monitor; prescribe; screen; measure",
    ),
    _topic(
        "Roman history",
        (
            "Senate; legion; aqueduct; consul; Punic War; tax reform; road network; "
            "citizenship law; grain supply; frontier wall"
        ),
        "Carthage; the Forum; Gaul; the Rhine frontier; Britannia",
        "soldiers; miles; years; denarii",
        "defend; build; reform; conquer; supply; govern",
    ),
    _topic(
        "urban transport",
        (
            "bus network; tram line; cycle lane; congestion charge; rush hour; ticket price; "
            "metro extension; parking policy; traffic signal; ridership"
        ),
        (
            "the city centre; the northern suburbs; the central station; the ring road; "
            "the harbour district"
        ),
        "passengers per day; minutes; kilometres; percent",
        "extend; reroute; subsidise; electrify; schedule; survey",
    ),
    _topic(
        "renewable energy",
        (
            "solar panel; wind turbine; battery storage; grid frequency; heat pump; "
            "capacity factor; feed in tariff; hydrogen plant; transmission line; peak demand"
        ),
        "the offshore farm; the substation; the rooftop array; the pilot plant; the national grid",
        "megawatts; kilowatt hours; percent; hertz",
        "install; connect; balance; store; forecast; curtail",
    ),
    _topic(
        "astronomy",
        (
            "red giant; exoplanet; light curve; neutron star; redshift; spiral galaxy; "
            "solar flare; orbital period; dark matter; telescope mirror"
        ),
        "the Andromeda galaxy; the observatory; the Kuiper belt; the Milky Way; the southern sky",
        "light years; solar masses; days; kelvin",
        "observe; detect; image; measure; catalogue; model",
    ),
    _topic(
        "genetics",
        (
            "gene expression; DNA sequence; point mutation; CRISPR edit; protein fold; "
            "allele frequency; cell culture; reference genome; RNA sample; promoter region"
        ),
        "the lab; the mouse model; the patient cohort; the sequencing core; the control group",
        "base pairs; percent; samples; fold change",
        "sequence; edit; amplify; express; knock out; annotate",
    ),
    _topic(
        "budget meeting",
        (
            "quarterly budget; hiring plan; travel budget; cloud bill; marketing spend; "
            "revenue forecast; contractor costs; office lease; bonus pool; runway"
        ),
        "the finance team; the board meeting; the Berlin office; the sales team; next quarter",
        "thousand euros; percent; people; months",
        "approve; cut; review; postpone; reallocate; forecast",
    ),
)

_TEMPLATES: tuple[str, ...] = (
    "The {thing} changed by about {number} {unit} in {place}.",
    "Most of the {thing} sits near {place}, between {low} and {high} {unit}.",
    "In {year}, the team in {place} started to {action} the {thing}.",
    "We need to {action} the {thing} before the end of the {period}.",
    "If you look at this chart, the {thing} rises together with the {thing2}.",
    "So on average the {thing} was roughly {number} {unit}.",
    "Remember that the {thing} and the {thing2} are not the same thing.",
    "{person} asked whether we can {action} the {thing} in {place}.",
    "The next step is to {action} the {thing} and compare it with the {thing2}.",
    "That is why the {thing} matters so much for the {thing2}.",
    "Our estimate for the {thing} is {number} {unit}, give or take {small}.",
    "Over {small} years the {thing} in {place} went up by {number} {unit}.",
    "A common mistake is to {action} the {thing} without checking the {thing2} first.",
    "Here you can see the {thing} on the left and the {thing2} on the right.",
    "{person} thinks the {thing} will reach {number} {unit} by {year}.",
    "Nobody expected the {thing} to drop below {number} {unit} so quickly.",
    "Before we {action} the {thing}, let me explain where the {thing2} comes from.",
    "The short answer is that the {thing} depends on the {thing2}.",
)

_FILLERS: tuple[str, ...] = (
    "Okay, let's move on.",
    "Does that make sense so far?",
    "I'll come back to this in a minute.",
    "Let me share my screen.",
    "Can everyone see the slide?",
    "Right, where was I?",
    "That's a really good question.",
    "We are running a little short on time.",
    "Let's take a short break here.",
    "Any questions before we continue?",
    "I think that covers the basics.",
    "Let me go back one slide.",
)

_PEOPLE = ("Maria", "Tom", "Aisha", "Kenji", "Lucia", "David", "Priya", "Olek", "Sara", "Ben")
_PERIODS = ("week", "month", "quarter", "sprint", "year", "semester")

_QUERY_TEMPLATES: tuple[str, ...] = (
    "what did they say about the {thing} in {place}",
    "how many {unit} was the {thing}",
    "when did the team start to {action} the {thing}",
    "why does the {thing} matter for the {thing2}",
    "{thing} {unit}",
    "who asked about the {thing}",
    "difference between {thing} and {thing2}",
    "how to {action} the {thing}",
    "estimate for the {thing}",
    "{thing} near {place}",
)

OFF_TOPIC_QUERIES: tuple[str, ...] = (
    "best sourdough starter recipe",
    "who won the chess world championship",
    "how to knit a scarf for beginners",
    "lyrics of a famous opera aria",
    "cheapest flights to Lisbon in May",
    "how to train a puppy to sit",
    "rules of cricket explained",
    "origami crane folding steps",
    "best hiking boots for wet weather",
    "how to remove a red wine stain",
    "vegetarian lasagne with spinach",
    "which houseplants need little light",
)


@dataclass(frozen=True)
class Sentence:
    """One spoken sentence: ``text`` from ``start`` to ``end`` seconds."""

    start: float
    end: float
    text: str


@dataclass(frozen=True, kw_only=True)
class SpeechGenerator:
    """Deterministic synthetic speech and queries.

    Attributes:
        seed: Everything generated follows from it.
        sentences_per_topic: Distinct sentences per topic in the pool. Speech draws from
            the pool, so sentences recur across recordings as stock phrases do; the
            windows they are packed into (the transcript units) are still distinct.
        chars_per_second: Speaking rate (about 150 words a minute).
        pause: Shortest and longest pause between sentences, in seconds.
        long_pause_chance: Chance of a pause of 9-20 s (longer than the unit builder's
            ``max_gap``), as when a speaker stops to run a demo.
    """

    seed: int = 7
    sentences_per_topic: int = 300
    chars_per_second: float = 16.0
    pause: tuple[float, float] = (0.15, 0.9)
    long_pause_chance: float = 0.01

    def __post_init__(self) -> None:
        if self.sentences_per_topic < 1:
            raise ValueError(f"sentences_per_topic must be >= 1, got {self.sentences_per_topic}")
        if self.chars_per_second <= 0:
            raise ValueError(f"chars_per_second must be > 0, got {self.chars_per_second}")
        if not 0 <= self.pause[0] <= self.pause[1]:
            raise ValueError(f"pause must be (shortest, longest) >= 0, got {self.pause}")

    def pool(self) -> dict[str, tuple[str, ...]]:
        """The distinct sentences of each topic, and the fillers under ``""``."""
        rng = random.Random(f"{self.seed}:pool")
        pools: dict[str, tuple[str, ...]] = {"": _FILLERS}
        for topic in TOPICS:
            found: dict[str, None] = {}
            attempts = 0
            while len(found) < self.sentences_per_topic:
                attempts += 1
                if attempts > 50 * self.sentences_per_topic:
                    raise ValueError(f"cannot make {self.sentences_per_topic} distinct sentences")
                found.setdefault(_fill(rng.choice(_TEMPLATES), topic, rng), None)
            pools[topic.name] = tuple(found)
        return pools

    def recording(self, index: int, duration: float) -> Iterator[Sentence]:
        """The sentences of recording ``index``, until ``duration`` seconds.

        A recording has a main topic and a side topic: 75 % of its sentences are on the
        first, 15 % on the second, 10 % fillers.
        """
        rng = random.Random(f"{self.seed}:recording:{index}")
        pools = self.pool()
        main = TOPICS[index % len(TOPICS)].name
        side = TOPICS[(index * 5 + 3) % len(TOPICS)].name
        if side == main:
            side = TOPICS[(index + 1) % len(TOPICS)].name
        time = rng.uniform(0.5, 3.0)
        while True:
            draw = rng.random()
            topic = main if draw < 0.75 else side if draw < 0.9 else ""
            text = rng.choice(pools[topic])
            spoken = len(text) / self.chars_per_second * rng.uniform(0.85, 1.15)
            if time + spoken > duration:
                return
            yield Sentence(round(time, 3), round(time + spoken, 3), text)
            pause = (
                rng.uniform(9.0, 20.0)
                if rng.random() < self.long_pause_chance
                else rng.uniform(*self.pause)
            )
            time += spoken + pause

    def queries(self, count: int, *, off_topic_share: float = 0.1, salt: str = "") -> list[str]:
        """``count`` distinct queries; about ``off_topic_share`` of them have no answer."""
        rng = random.Random(f"{self.seed}:queries:{salt}")
        off_topic = list(OFF_TOPIC_QUERIES)
        rng.shuffle(off_topic)
        wanted_off = min(round(count * off_topic_share), len(off_topic))
        found: dict[str, None] = dict.fromkeys(off_topic[:wanted_off])
        attempts = 0
        while len(found) < count:
            attempts += 1
            if attempts > 100 * count:
                raise ValueError(f"cannot make {count} distinct queries")
            found.setdefault(_fill(rng.choice(_QUERY_TEMPLATES), rng.choice(TOPICS), rng), None)
        queries = list(found)
        rng.shuffle(queries)
        return queries


def _fill(template: str, topic: Topic, rng: random.Random) -> str:
    thing, thing2 = rng.sample(topic.things, 2)
    low = rng.randint(2, 40)
    return template.format(
        thing=thing,
        thing2=thing2,
        place=rng.choice(topic.places),
        unit=rng.choice(topic.units),
        action=rng.choice(topic.actions),
        number=rng.choice((rng.randint(2, 99), rng.randint(100, 999), round(rng.random() * 10, 1))),
        low=low,
        high=low + rng.randint(5, 60),
        small=rng.randint(2, 12),
        year=rng.randint(1950, 2030),
        person=rng.choice(_PEOPLE),
        period=rng.choice(_PERIODS),
    )


def group_sentences(unit_texts: Sequence[str], sentence_texts: Sequence[str]) -> list[list[int]]:
    """Which consecutive sentences make up each unit (indices into ``sentence_texts``).

    Units are whole sentences joined by single spaces, in order (the unit builder only
    cuts sentences longer than its ``max_chars``; generated ones are shorter).

    Raises:
        ValueError: a unit is not a run of whole sentences, or sentences are left over.
    """
    groups: list[list[int]] = []
    cursor = 0
    for text in unit_texts:
        group: list[int] = []
        joined = ""
        while joined != text:
            if cursor >= len(sentence_texts) or len(joined) >= len(text):
                raise ValueError(f"unit {len(groups)} is not a run of whole sentences: {text!r}")
            joined = f"{joined} {sentence_texts[cursor]}" if group else sentence_texts[cursor]
            group.append(cursor)
            cursor += 1
        groups.append(group)
    if cursor != len(sentence_texts):
        raise ValueError(f"{len(sentence_texts) - cursor} sentences are in no unit")
    return groups
