"""``ask --export FILE``: the cited moments joined into one file, with subtitles beside it.

Moments are joined in citation order (re-encoded, so each is cut exactly); what was
said in each becomes a subtitle in ``FILE`` with the suffix ``.srt``, timed on the
joined file, which players load as a soft subtitle track.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.errors import MomentRequestError, printable_path

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.results import Answer

MAX_EXPORT_SECONDS = 600.0


def export_answer(
    index: VideoIndex, answer: Answer, output: Path, *, max_seconds: float = MAX_EXPORT_SECONDS
) -> str:
    """Write the cited moments of ``answer`` to ``output`` and its ``.srt``; returns the
    line to print.

    Raises:
        MomentRequestError: no timed moment is cited, or together they are too long.
    """
    import srt

    from llama_index_video.media.export import join_spans
    from llama_index_video.store.library import check_span, resolve_source, transcript

    spans: list[tuple[Path, float, float]] = []
    subtitles: list[srt.Subtitle] = []
    at = 0.0
    for citation in answer.citations:
        if citation.start is None or citation.end is None or citation.modality == "text":
            continue
        recording = resolve_source(index.manifest, citation.source_path or citation.source)
        check_span(recording, citation.start, citation.end)
        said = transcript(
            index.vector_store, recording.content_hash, start=citation.start, end=citation.end
        )
        text = " ".join(line.text for line in said) or citation.label
        length = citation.end - citation.start
        subtitles.append(
            srt.Subtitle(
                len(subtitles) + 1,
                timedelta(seconds=at),
                timedelta(seconds=at + length),
                f"{citation.label} {text}",
            )
        )
        spans.append((Path(recording.path), citation.start, citation.end))
        at += length
    if not spans:
        raise MomentRequestError(f"{printable_path(output)}: the answer cites no timed moment")
    if at > max_seconds:
        raise MomentRequestError(
            f"{printable_path(output)}: the cited moments last {at:.0f} s, over the limit "
            f"of {max_seconds:g} s; ask with a smaller --top-k"
        )
    seconds = join_spans(spans, output)
    sidecar = output.with_suffix(".srt")
    sidecar.write_text(srt.compose(subtitles), encoding="utf-8")
    return (
        f"wrote {printable_path(output)}: {len(spans)} moments, {seconds:.1f} s, re-encoded "
        f"at each cut; subtitles in {printable_path(sidecar)}"
    )
