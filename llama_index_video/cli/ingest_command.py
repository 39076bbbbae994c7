"""``llama-index-video ingest``: read files, links or a live stream into the index
folder and print each file's line as soon as it is done (Ctrl-C keeps them); and the
index that ``ingest`` and ``watch`` write, with the reader, embedding, OCR, speakers and
executor their flags ask for."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.cli.interrupts import Interrupts
from llama_index_video.cli.opening import open_index, store_options
from llama_index_video.cli.status import EXIT_FAILED_FILES, EXIT_INTERRUPTED
from llama_index_video.embeddings.capabilities import usage
from llama_index_video.embeddings.local import MULTILINGUAL_MODEL
from llama_index_video.embeddings.spec import EmbeddingSpec
from llama_index_video.errors import VideoIndexError, printable_path
from llama_index_video.store.ingest_report import FileOutcome, IngestReport

if TYPE_CHECKING:
    from llama_index_video.executor.base import Executor
    from llama_index_video.index import VideoIndex
    from llama_index_video.ocr.base import OcrEngine
    from llama_index_video.ocr.choice import OcrChoice
    from llama_index_video.reader.options import ReaderOptions
    from llama_index_video.sources.download import DownloadOptions
    from llama_index_video.speakers.base import Diarizer


def reading_index(args: argparse.Namespace) -> VideoIndex:
    """The index ``ingest`` and ``watch`` write, reading files as their flags say."""
    from llama_index_video.embeddings.clip import DEFAULT_CLIP_MODEL, ClipEmbedding

    visual = (
        None if args.visual is None else ClipEmbedding(model_name=args.visual or DEFAULT_CLIP_MODEL)
    )
    try:
        options = _reader_options(args)
    except ValueError as exc:
        raise VideoIndexError(f"bad {args.command} option: {exc}") from exc
    try:
        return open_index(
            args.index,
            visual_model=visual,
            embed_model=_embedding_spec(args),
            reader_options=options,
            **store_options(args),
        )
    except ValueError as exc:  # an option the index refuses: clip windows for a text model
        raise VideoIndexError(f"{args.index}: {exc}") from exc


def run_ingest(args: argparse.Namespace) -> int:
    if args.live:  # its own Ctrl-C: the first ends the recording
        return _ingest(args, None)
    with Interrupts() as interrupts:
        return _ingest(args, interrupts)


def _ingest(args: argparse.Namespace, interrupts: Interrupts | None) -> int:
    from llama_index_video.cli.progress import ProgressBars

    index = reading_index(args)
    bars = ProgressBars(enabled=not args.quiet and sys.stderr.isatty())
    told: list[FileOutcome] = []

    def tell(outcome: FileOutcome) -> None:
        told.append(outcome)  # done, even if Ctrl-C cuts its line short
        bars.close()  # the line takes the bar's place on the terminal
        print(file_line(outcome), flush=True)
        if interrupts is not None:
            interrupts.check()

    def progress(path: Path, stage: str, done: float, total: float) -> None:
        if interrupts is not None:
            interrupts.check()
        bars(path, stage, done, total)

    try:
        if args.prune:
            for source in index.prune(wait=args.wait):
                print(f"{'removed':8} {printable_path(source)} (file gone)", flush=True)
        if args.live:
            from llama_index_video.cli.watch_command import run_live

            report = run_live(args, index)
            for outcome in report.files:
                tell(outcome)
        else:
            report = index.ingest(
                args.paths,
                progress=progress,
                executor=_executor(args.ray),
                wait=args.wait,
                downloads=_download_options(args),
                on_file=tell,
            )
    except KeyboardInterrupt:
        if args.live:
            raise  # its chunks are stored, not files: the command line's own message says so
        bars.close()
        print(f"interrupted: {counts(told)}; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        bars.close()
        index.close()
    print_summary(report, args.index)
    spent = usage(index.embed_model)
    if spent is not None:
        print(
            f"gemini: {spent.embedded_items} items embedded in {spent.requests} requests"
            f" and {spent.batch_jobs} batch jobs, {spent.failed_items} failed,"
            f" {spent.prompt_tokens} input tokens, {spent.uploaded_files} files uploaded"
        )
    return 0 if report.ok else EXIT_FAILED_FILES


def _reader_options(args: argparse.Namespace) -> ReaderOptions:
    """How ``ingest`` reads files; the index adds where media goes and whether to cut clips."""
    from llama_index_video.media.frames import FrameSamplingOptions
    from llama_index_video.reader.clips import ClipOptions
    from llama_index_video.reader.options import ReaderOptions
    from llama_index_video.transcription.faster import FasterWhisperTranscriber
    from llama_index_video.transcription.language import language_code

    spoken = language_code(args.language) if args.language is not None else None
    transcriber = {"model": args.whisper_model, "language": spoken}
    windows = {"video_seconds": args.clip_seconds, "video_overlap": args.clip_overlap}
    given = {key: value for key, value in windows.items() if value is not None}
    return ReaderOptions(
        transcriber=FasterWhisperTranscriber(
            **{key: value for key, value in transcriber.items() if value}
        ),
        use_subtitles=not args.no_subtitles,
        audio_track=args.audio_track,
        audio_lead_in_seconds=args.lead_in,
        split_channels=not args.mix_channels,
        frames=None if args.no_frames else FrameSamplingOptions(interval=args.frame_interval),
        ocr=_ocr(args.ocr, args.ocr_languages),
        clips=ClipOptions(**given) if given else None,
        diarizer=_diarizer(args.speakers, args.diarizer),
    )


def _ocr(choice: OcrChoice, languages: str | None) -> OcrEngine | OcrChoice:
    """``--ocr``, or tesseract in ``--ocr-languages`` (with ``--ocr auto`` or ``tesseract``).

    Raises:
        ValueError: languages given with another engine, or none.
    """
    if languages is None:
        return choice
    if choice not in ("auto", "tesseract"):
        raise ValueError(f"--ocr-languages reads with tesseract, not with --ocr {choice}")
    from llama_index_video.ocr.tesseract import TesseractEngine

    return TesseractEngine(languages=languages)


def _executor(ray_address: str | None) -> Executor | None:
    if ray_address is None:
        return None
    from llama_index_video.executor.ray import RayExecutor

    return RayExecutor(ray_address or None)


def file_line(outcome: FileOutcome) -> str:
    """One file's line: ``indexed  talk.mp4, 12 moments``, ``failed   x.mp4 (reason)``;
    a newline or other control character in a file name is shown escaped (``\\n``), so
    the line stays one line."""
    detail = f" ({outcome.reason})" if outcome.reason else ""
    nodes = f", {outcome.moments}" if outcome.outcome == "indexed" else ""
    shown = outcome.link or printable_path(outcome.path)
    line = f"{outcome.outcome:8} {shown}{nodes}{detail}"
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in line)


def counts(files: Sequence[FileOutcome]) -> str:
    """``2 indexed, 1 skipped, 0 failed``."""
    report = IngestReport(list(files))
    return ", ".join(f"{len(report.of(kind))} {kind}" for kind in ("indexed", "skipped", "failed"))


def print_report(report: IngestReport, index_dir: Path) -> None:
    """Each file's line, then :func:`print_summary`."""
    for outcome in report.files:
        print(file_line(outcome))
    print_summary(report, index_dir)


def print_summary(report: IngestReport, index_dir: Path) -> None:
    """The lines after the files': what was passed over, the counts, what is not repaired."""
    if report.passed_over:
        print(report.passed_over_line)
    print(f"{counts(report.files)} -> {index_dir}")
    if report.unreachable:
        print(
            f"not repaired: {report.unreachable} stored moments search still cannot reach "
            "(found by their words only); re-ingest into a new index folder to rebuild it"
        )


def _download_options(args: argparse.Namespace) -> DownloadOptions:
    from llama_index_video.sources.download import DownloadOptions

    if args.max_download_mb <= 0:
        raise VideoIndexError("--max-download-mb must be > 0")
    return DownloadOptions(max_bytes=int(args.max_download_mb * 1_000_000))


def _diarizer(speakers: str | None, backend: str) -> Diarizer | None:
    """The speaker backend asked for by ``--speakers [N]`` and ``--diarizer``."""
    if speakers is None:
        return None
    count = None if speakers == "auto" else _speaker_count(speakers)
    if backend == "pyannote":
        from llama_index_video.speakers.pyannote_diarizer import PyannoteDiarizer

        return PyannoteDiarizer(num_speakers=count)
    if backend == "resemblyzer":
        from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer

        return ResemblyzerDiarizer(num_speakers=count)
    from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer

    return CampplusDiarizer(num_speakers=count)


def _speaker_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 50:
        raise VideoIndexError(f"--speakers takes a number of speakers from 1 to 50, not {text!r}")
    return int(text)


def _embedding_spec(args: argparse.Namespace) -> EmbeddingSpec | None:
    """The embedding asked for on the command line; None: the index's own (or the default)."""
    if args.embed is None:
        if args.dimension is not None or args.batch_api or args.embed_model:
            raise VideoIndexError("--dimension, --batch-api and --embed-model need --embed")
        return None
    if args.embed == "multilingual":
        if args.embed_model or args.dimension is not None or args.batch_api:
            raise VideoIndexError(
                "--embed multilingual takes no --embed-model, --dimension or --batch-api"
            )
        return EmbeddingSpec(model=MULTILINGUAL_MODEL)
    return EmbeddingSpec(
        backend=args.embed,
        model=args.embed_model,
        dimension=args.dimension if args.embed == "gemini" else None,
        batch_api=args.batch_api,
    )
