"""The meeting of a new user's trial, as encoders the suite never reads, asked through an
installed package.

    python benchmarks/package_trial.py build DIR          # the recordings and reference.json
    python benchmarks/package_trial.py score INDEX FILE   # the questions, through VideoIndex.search
    python benchmarks/package_trial.py app INDEX FILE     # the same, as a LlamaIndex app asks

The meeting is :mod:`benchmarks.meeting_trial`'s (15:59 of real voices, their licences in
each piece's JSON). ``build`` writes it as :data:`FORMS`: AAC beside a still H.264 frame in
MP4 under a name with spaces and non-ASCII letters, MP3 at 8 kHz mono as a phone bridge
records, and Apple Lossless in a Core Audio file. ``score`` asks the meeting's questions of
one recording in an index and prints whether each first hit starts within 3 s of its
sentence and names the reader. ``app`` asks them as a third-party app would: the index's
``as_retriever()`` in a ``RetrieverQueryEngine`` on LlamaIndex's ``MockLLM``, its
``aretrieve``, and a ``VectorStoreIndex`` of the recording's ``VideoReader`` nodes on
``local_embedding()`` (each way's first node's ``start_s``). Run it with the Python of
the environment the package is installed in; there is no baseline: the figures are the
product's current state (docs/evaluation.md, *A new user's trial: the built package*).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.baseline import load_average
from benchmarks.meeting_trial import (
    QUESTIONS,
    TOLERANCE_SECONDS,
    ffmpeg,
    join,
    print_score,
    starts_at,
)

STILL = ("-f", "lavfi", "-i", "color=c=darkgreen:s=640x360:r=1")
FORMS: dict[str, tuple[str, ...]] = {
    "Réunion d'équipe – 7 déc.mp4": (
        *("-map", "1:a", "-map", "0:v", "-shortest"),
        *("-c:v", "libx264", "-tune", "stillimage", "-pix_fmt", "yuv420p"),
        *("-c:a", "aac", "-ar", "24000", "-b:a", "32k", "-movflags", "+faststart"),
    ),
    "standup phone 8k.mp3": ("-c:a", "libmp3lame", "-ar", "8000", "-ac", "1", "-b:a", "16k"),
    "standup.caf": ("-c:a", "alac"),
}
"""Each recording's name and the ffmpeg output options that encode it from the WAV."""


def build(folder: Path) -> None:
    """Write the meeting as each of :data:`FORMS`, and its reference, into ``folder``."""
    master = join(folder)
    for name, options in FORMS.items():
        still = STILL if "0:v" in options else ()
        ffmpeg(*still, "-i", str(master), *options, str(folder / name))
    master.unlink()


def first_starts(starts: Sequence[float | None]) -> int:
    """How many of :data:`QUESTIONS` have their first start within the tolerance."""
    return sum(
        start is not None and starts_at(start, sentence_starts)
        for (_, sentence_starts, _), start in zip(QUESTIONS, starts, strict=True)
    )


def app(index_folder: Path, recording: str) -> None:
    """Ask :data:`QUESTIONS` through LlamaIndex's own classes and print each way's count."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from llama_index_video import VideoIndex, VideoReader, local_embedding

    def start_of(nodes: list) -> float | None:
        return nodes[0].node.metadata["start_s"] if nodes else None

    index = VideoIndex(index_folder)
    try:
        path = index.recording(recording).path
        retriever = index.as_retriever(similarity_top_k=3, sources=[recording])
        engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
        questions = [question for question, _, _ in QUESTIONS]
        engine_starts = [start_of(engine.query(q).source_nodes) for q in questions]

        async def retrieve_all() -> list[float | None]:
            found = await asyncio.gather(*(retriever.aretrieve(q) for q in questions))
            return [start_of(nodes) for nodes in found]

        async_starts = asyncio.run(retrieve_all())
    finally:
        index.close()
    nodes = VideoReader().load_data([path])
    own = VectorStoreIndex(nodes, embed_model=local_embedding()).as_retriever(similarity_top_k=1)
    own_starts = [start_of(own.retrieve(q)) for q in questions]
    asked = len(QUESTIONS)
    print(
        f"RetrieverQueryEngine(as_retriever(), MockLLM): {first_starts(engine_starts)} of {asked}"
    )
    print(f"as_retriever().aretrieve, gathered: {first_starts(async_starts)} of {asked}")
    print(f"VectorStoreIndex(VideoReader nodes): {first_starts(own_starts)} of {asked}")
    print(f"({TOLERANCE_SECONDS:g} s; load {load_average()})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["build", "score", "app"])
    parser.add_argument("folder", type=Path, help="build: where to write; otherwise the index")
    parser.add_argument("recording", nargs="?", help="score, app: the recording's file name")
    args = parser.parse_args(argv)
    if args.action == "build":
        build(args.folder)
        print(f"wrote {', '.join(FORMS)} in {args.folder}")
        return 0
    if args.recording is None:
        parser.error(f"{args.action} needs the recording's file name")
    if args.action == "app":
        app(args.folder, args.recording)
        return 0
    print_score(args.folder, args.recording)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
