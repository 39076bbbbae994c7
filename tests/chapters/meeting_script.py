"""A constructed 16-minute meeting with four known topics, four minutes each.

Each sentence is one subtitle cue of 8 s, 20 s apart, so the topics change at 240 s,
480 s and 720 s; every topic has its own words (the budget, the battery, the colours
of the case, the marketing campaign), and a decision, an action item or an open
question in each (:data:`SAID`). Written for the chapter and summary tests: the transcript
comes from a sidecar ``.srt``, so no speech recognition is involved.
"""

from __future__ import annotations

from pathlib import Path

TOPICS: dict[str, list[str]] = {
    "budget": [
        "Let's start with the budget for the new remote control.",
        "The budget allows twelve euros fifty per unit for production.",
        "Our finance team says the budget cannot grow this year.",
        "If we go over budget the selling price has to rise to thirty euros.",
        "The production cost of the chips takes most of the budget.",
        "We should keep a reserve in the budget for the packaging.",
        "The budget spreadsheet shows the cost of every component.",
        "Accounting wants the final budget numbers by Friday.",
        "Cheaper buttons would save two euros of the budget.",
        "The profit target is fifty million euros on this budget.",
        "We decided to fix the budget at twelve euros fifty per remote.",
        "That settles the budget and the production costs.",
    ],
    "battery": [
        "Now the battery: how long should one battery last?",
        "A lithium battery lasts two years but costs more.",
        "Two standard AA batteries are cheaper and easy to replace.",
        "The battery compartment needs a sliding cover.",
        "A kinetic charger could recharge the battery when the remote is shaken.",
        "Solar cells on the top could charge the battery in daylight.",
        "The battery voltage drops when the infrared light flashes.",
        "We need a low battery warning light on the remote.",
        "Rechargeable batteries need a charging dock on the table.",
        "I'll send the charging dock quotes to everyone by Friday.",
        "Users hate changing batteries every few months.",
        "So the battery will be two rechargeable cells with a dock.",
    ],
    "colours": [
        "Next item is the colour and the shape of the case.",
        "Our research shows that fruit and vegetable colours are in fashion.",
        "A yellow case shaped like a banana would stand out.",
        "The case could be made of soft rubber in bright colours.",
        "Dark grey plastic looks old fashioned to young people.",
        "The logo should be printed in the corporate colour on the case.",
        "A curved shape fits better in the palm of the hand.",
        "The rubber case also protects the remote when it falls.",
        "We could offer the case in three colours: yellow, green and red.",
        "Spongy rubber feels nice but collects dust.",
        "Let's go with a curved yellow case with a rubber grip.",
        "That decides the colours and the shape.",
    ],
    "marketing": [
        "Finally, the marketing campaign for the launch.",
        "The advertising should target people between fifteen and thirty five.",
        "Television commercials are expensive, so we start online.",
        "Social media influencers could show the remote in short videos.",
        "The slogan of the campaign will be put the fashion in electronics.",
        "Shops want a display stand for the launch week.",
        "The campaign should start two weeks before the remote is in shops.",
        "A competition with a free remote would attract customers.",
        "Marketing will measure the campaign by online sales.",
        "We still need to decide the price of the launch bundle.",
        "The launch advertising budget belongs to the marketing department.",
        "You need to prepare the campaign plan for next meeting.",
    ],
}
# What the summary must find: (kind, the sentence's first words).
SAID = (
    ("decisions", "We decided to fix the budget"),
    ("action_items", "I'll send the charging dock quotes"),
    ("decisions", "Let's go with a curved yellow case"),
    ("open_questions", "We still need to decide the price"),
    ("action_items", "You need to prepare the campaign plan"),
)
TOPIC_SECONDS = 240.0
CUE_STEP = 20.0
CUE_LENGTH = 8.0


def cues() -> list[tuple[float, float, str, str]]:
    """``(start, end, text, topic)`` of every cue, in time order."""
    timed = []
    for number, (topic, sentences) in enumerate(TOPICS.items()):
        for i, sentence in enumerate(sentences):
            start = number * TOPIC_SECONDS + i * CUE_STEP
            timed.append((start, start + CUE_LENGTH, sentence, topic))
    return timed


def write_srt(path: Path) -> Path:
    def stamp(seconds: float) -> str:
        whole = int(seconds)
        return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d},000"

    blocks = [
        f"{n}\n{stamp(start)} --> {stamp(end)}\n{text}\n"
        for n, (start, end, text, _) in enumerate(cues(), start=1)
    ]
    path.write_text("\n".join(blocks), encoding="utf-8")
    return path


def length() -> float:
    return TOPIC_SECONDS * len(TOPICS)
