"""Chapters of a recording in four languages: do they begin where the language changes?

    python benchmarks/language_chapters.py [--baseline-ref REF] [--keep DIR]
        [--misheard N ...]

Material, **real speech**: the forty FLEURS readings of ``tests/fixtures/fleurs_languages``
joined per language, German, Spanish, French, Portuguese, 1.2 s apart: the 9:24 recording
of a new user's trial. It is ingested once, by this checkout with its defaults
(``llama-index-video ingest``: the language check, ``base`` for speech not in English);
speech recognition is the same in both versions, so each version (this checkout, and
``--baseline-ref``, ``main`` by default) then makes the chapters of the stored units and
their stored vectors in a child process, as ingest would. ``--misheard N`` also makes
them with unit N heard in another language (Italian), as the language check may mishear
a block of speech. Printed per version: each chapter's start and title, and each change
of language with the distance to the nearest chapter start. ``--keep DIR`` keeps the
index there and reuses it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: a child imports the version it was given

from benchmarks.baseline import load_average, measured_in, release, today  # noqa: E402
from benchmarks.multilingual import write_wav  # noqa: E402

READINGS = ROOT / "tests" / "fixtures" / "fleurs_languages"
LANGUAGES = ("de", "es", "fr", "pt")
GAP_SECONDS = 1.2
SAMPLE_RATE = 16_000

CHAPTERING = """
import json
import chromadb
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from llama_index_video import schema
from llama_index_video.chapters.nodes import chapter_nodes, transcript_units
rows = chromadb.PersistentClient({chroma!r}).get_collection("video_moments").get(
    where={{schema.MODALITY: "transcript"}}, include=["embeddings", "metadatas", "documents"]
)
nodes = []
for metadata, text, vector in zip(rows["metadatas"], rows["documents"], rows["embeddings"]):
    node = metadata_dict_to_node(metadata, text=text)
    node.embedding = list(vector)
    nodes.append(node)
units = transcript_units(nodes)
found = {{}}
for misheard in [None, *{misheard!r}]:
    if misheard is not None:
        units[misheard].metadata[schema.LANGUAGE] = "it"
    found[str(misheard)] = [
        [float(c.metadata[schema.START_S]), c.metadata[schema.TITLE]] for c in chapter_nodes(units)
    ]
    if misheard is not None:
        units[misheard].metadata[schema.LANGUAGE] = {languages!r}[0]
print(json.dumps(found))
"""


def join(into: Path) -> list[float]:
    """Write the four-language recording to ``into``; where each language begins."""
    from llama_index_video.media.audio import decode_audio

    clips = json.loads((READINGS / "clips.json").read_text("utf-8"))["clips"]
    parts: list[np.ndarray] = []
    changes: list[float] = []
    at = 0
    for language in LANGUAGES:
        changes.append(at / SAMPLE_RATE)
        for clip in (c for c in clips if c["language"] == language):
            if at:
                parts.append(np.zeros(round(GAP_SECONDS * SAMPLE_RATE), np.float32))
                at += len(parts[-1])
            parts.append(decode_audio(READINGS / clip["audio"]))
            at += len(parts[-1])
    write_wav(into, np.clip(np.concatenate(parts), -1.0, 1.0) * 32767, SAMPLE_RATE)
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", default="main")
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--misheard", type=int, nargs="*", default=[])
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="language_chapters_"))
    folder.mkdir(parents=True, exist_ok=True)
    audio = folder / "four_languages.wav"
    changes = join(audio)
    print(f"load average before: {load_average()}")
    if not (folder / "index").exists():
        version = today()
        subprocess.run(
            [*version.cli("ingest", "--index", str(folder / "index"), "--quiet", str(audio))],
            env=version.env(),
            cwd=folder,
            check=True,
        )
    code = CHAPTERING.format(
        chroma=str(folder / "index" / "chroma"), misheard=args.misheard, languages=LANGUAGES
    )
    print("changes of language at " + ", ".join(f"{c:.1f} s" for c in changes))
    for version in (release(args.baseline_ref), today()):
        print(f"\n{version.name}")
        for misheard, chapters in measured_in(version, code).items():
            if misheard != "None":
                print(f"  with unit {misheard} heard as Italian")
            for start, title in chapters:
                print(f"    {start:6.1f} s  {title}")
            starts = [start for start, _ in chapters]
            off = [min(abs(s - c) for s in starts) for c in changes[1:]]
            print("  nearest chapter start to each change: " + ", ".join(f"{o:.1f} s" for o in off))
    print(f"\nload average after: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
