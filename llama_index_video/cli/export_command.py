"""``ask --export FILE``: the cited moments joined into one file, with their subtitles.

Moments are joined in citation order (re-encoded, so each is cut exactly). What was said
in each, unit by unit as transcribed, becomes a subtitle timed on the joined file (the
first of each moment under the citation's label): a soft track inside ``FILE`` where
its container holds one (MP4, MOV, MKV), or drawn onto the frames with
``--burn-subtitles``; and always in ``FILE`` with the suffix ``.srt`` beside it, the only
subtitles of an audio-only export.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.errors import MediaError, MomentRequestError, printable_path
from llama_index_video.recordings import MAX_MOMENT_SECONDS

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.media.export_subtitles import Cue
    from llama_index_video.results import Answer
    from llama_index_video.store.recording_names import IndexedSource


def export_answer(
    index: VideoIndex,
    answer: Answer,
    output: Path,
    *,
    max_seconds: float = MAX_MOMENT_SECONDS,
    burn: bool = False,
) -> str:
    """Write the cited moments of ``answer`` to ``output`` and its ``.srt``; returns the
    line to print.

    Raises:
        MomentRequestError: no timed moment is cited, or together they are too long.
        MediaError: a moment cannot be read, or ``burn`` with audio-only recordings.
    """
    from llama_index_video.media.export_subtitles import shift_cues

    moments: list[tuple[IndexedSource, float, float]] = []
    cues: list[Cue] = []
    at = 0.0
    for citation in answer.citations:
        if citation.start is None or citation.end is None or citation.modality == "text":
            continue
        recording = index.recording(citation.source_path or citation.source)
        said = spoken_cues(index, recording, citation.start, citation.end, citation.label)
        length = citation.end - citation.start
        cues += shift_cues(said, citation.start - at, length=at + length)
        moments.append((recording, citation.start, citation.end))
        at += length
    if not moments:
        raise MomentRequestError(f"{printable_path(output)}: the answer cites no timed moment")
    check_sidecar(index, output)
    report = index.join(moments, output, cues=cues, burn=burn, max_seconds=max_seconds)
    return (
        f"wrote {printable_path(output)}: {len(moments)} moment{'s' if len(moments) != 1 else ''}, "
        f"{report.duration:.1f} s, "
        f"re-encoded at each cut; "
        + write_sidecar(
            output, cues, report.subtitles, sources=[Path(r.path) for r, _, _ in moments]
        )
    )


def spoken_cues(
    index: VideoIndex, recording: IndexedSource, start: float, end: float, label: str
) -> list[Cue]:
    """What was said in ``recording`` from ``start`` to ``end``, one cue per transcript
    unit on the recording's timeline, cut to the span; the first under ``label``. A span
    with no speech gets the label alone, all along."""
    from llama_index_video.media.export_subtitles import Cue

    lines = index.transcript(recording, start=start, end=end)
    cues = [
        Cue(max(start, line.start), min(end, line.end), line.text.strip())
        for line in lines
        if min(end, line.end) > max(start, line.start) and line.text.strip()
    ]
    if not cues:
        return [Cue(start, end, label)]
    first = cues[0]
    return [Cue(first.start, first.end, f"{label}\n{first.text}"), *cues[1:]]


def check_sidecar(index: VideoIndex, output: Path) -> None:
    """Refuse, before anything is written, when ``output``'s ``.srt`` is a file ``index``
    read: an indexed source, or the subtitles ingest reads for one (``talk.srt`` beside
    ``talk.mp4``): writing it would replace that recording's transcript at its next ingest.

    Raises:
        MediaError: naming the ``.srt`` and the recording.
    """
    from llama_index_video.transcription.subtitles import sidecar_tag

    sidecar = output.with_suffix(".srt")
    target = Path(os.path.realpath(sidecar))
    for record in index.manifest.all_paths():
        source = Path(os.path.realpath(index.manifest.located(record)))
        if source == target or sidecar_tag(target, source) is not None:
            raise MediaError(
                sidecar,
                f"is the subtitle file of the indexed {printable_path(source)} (ingest reads "
                "it); writing it would replace what that recording says: choose another output",
            )


def write_sidecar(
    output: Path, cues: list[Cue], subtitles: str | None, *, sources: list[Path]
) -> str:
    """Write ``cues`` (on ``output``'s timeline) to ``output``'s ``.srt``, never onto one
    of the recordings ``sources``; returns the words saying where the subtitles went."""
    from llama_index_video.media.export_subtitles import srt_text
    from llama_index_video.media.output import write_text

    sidecar = output.with_suffix(".srt")
    write_text(sidecar, srt_text(cues), sources=sources)
    name = printable_path(sidecar)
    if subtitles == "track":
        return f"subtitles in a track of the file and in {name}"
    if subtitles == "burned":
        return f"subtitles burned into the frames, also in {name}"
    return f"subtitles in {name} (no track in the file: audio only, or its format has none)"
