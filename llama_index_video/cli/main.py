"""The ``llama-index-video`` command: ``ingest``, ``search``, ``ask``, ``serve``, ``verify``.

It parses arguments, builds the library objects and prints; every error the package
raises on purpose ends the command with one line on stderr and a non-zero status
(``--debug`` shows the traceback). API keys are masked in everything it prints and
logs, tracebacks included (:mod:`llama_index_video.api_keys`).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from llama_index_video._version import __version__
from llama_index_video.api_keys import ScrubbingFormatter, scrub, scrubbed_traceback
from llama_index_video.cli.clip_command import add_clip_parser, run_clip
from llama_index_video.cli.mcp_command import add_mcp_parser, run_mcp
from llama_index_video.embeddings.capabilities import usage
from llama_index_video.embeddings.local import MULTILINGUAL_MODEL
from llama_index_video.embeddings.spec import EmbeddingSpec
from llama_index_video.errors import VideoIndexError, printable_path
from llama_index_video.media.limits import DEFAULT_WINDOWS, MAX_SECONDS, VIDEO_WITH_AUDIO_SECONDS
from llama_index_video.schema import MODALITIES, format_timestamp, parse_modalities
from llama_index_video.speakers.base import parse_speakers
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS

if TYPE_CHECKING:
    from llama_index_video.executor.base import Executor
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.options import ReaderOptions
    from llama_index_video.sources.download import DownloadOptions
    from llama_index_video.speakers.base import Diarizer
    from llama_index_video.store.ingest import IngestReport

EXIT_FAILED_FILES = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_BUG = 70  # EX_SOFTWARE: an error the package did not expect
READ_ONLY_COMMANDS = frozenset({"search", "ask", "list"})
"""Commands that write nothing but their output (the console script ends them faster)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="llama-index-video",
        description="Index video, audio and notes; search and ask them, cited to the second.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = commands.add_parser(
        "ingest",
        help="add files or folders to the index",
        description="Index video, audio, .md and .txt files (folders recursively). "
        "Unchanged files are skipped; changed files replace their old moments.",
    )
    ingest.add_argument("paths", nargs="+", metavar="PATH|URL")
    ingest.add_argument(
        "--max-download-mb",
        type=float,
        default=4096,
        help="refuse links to media larger than this many MB (default: 4096)",
    )
    _index_option(ingest)
    ingest.add_argument(
        "--no-subtitles", action="store_true", help="always transcribe, ignore subtitle files"
    )
    ingest.add_argument(
        "--frame-interval", type=float, default=5.0, help="seconds between sampled frames"
    )
    ingest.add_argument("--no-frames", action="store_true", help="do not sample frames")
    ingest.add_argument(
        "--ocr",
        choices=("auto", "rapidocr", "tesseract", "off"),  # ocr.OCR_CHOICES, kept light
        default="auto",
        help="engine reading on-screen text of frames (default: rapidocr when installed)",
    )
    ingest.add_argument(
        "--visual",
        nargs="?",
        const="",
        default=None,
        metavar="MODEL",
        help="also embed frames by their pixels for visual search, with a CLIP-family model "
        "(default: openai/clip-vit-base-patch32, downloaded on first use); "
        "chosen when the index is created",
    )
    ingest.add_argument(
        "--whisper-model",
        default=None,
        help="faster-whisper model name or folder (default: tiny.en, offline copy if installed)",
    )
    ingest.add_argument(
        "--language", default=None, help="spoken language, e.g. 'de' (default: detect)"
    )
    ingest.add_argument(
        "--speakers",
        nargs="?",
        const="auto",
        default=None,
        metavar="N",
        help="label who spoke in each transcript unit; N: how many speakers there are "
        "(default: estimated)",
    )
    ingest.add_argument(
        "--diarizer",
        choices=("campplus", "resemblyzer", "pyannote"),
        default="campplus",
        help="speaker backend for --speakers: campplus (offline, default), resemblyzer "
        "(offline, older) or pyannote (needs HF_TOKEN)",
    )
    ingest.add_argument(
        "--prune", action="store_true", help="first remove sources whose files are gone"
    )
    ingest.add_argument("--quiet", action="store_true", help="no progress bars")
    ingest.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="read and embed on a Ray cluster (needs 'llama-index-video[ray]'); ADDRESS as "
        "for 'ray.init' (default: $RAY_ADDRESS, else the cluster on this machine)",
    )
    _wait_options(ingest)
    embedding = ingest.add_argument_group(
        "embedding (chosen when the index is created; later runs reuse it)"
    )
    embedding.add_argument(
        "--embed",
        choices=["local", "multilingual", "gemini"],
        default=None,
        help="local all-MiniLM-L6-v2 on ONNX (default, English; --embed-model takes any "
        "sentence-transformers model with the [sentence-transformers] extra), multilingual "
        "(multilingual-e5-small, about 100 languages, questions across languages; the "
        "[multilingual] extra) or Gemini Embedding 2 (native video, audio, image and text "
        "vectors; needs GEMINI_API_KEY)",
    )
    embedding.add_argument("--embed-model", default=None, help="embedding model name")
    embedding.add_argument(
        "--dimension", type=_dimension, default=None, help="Gemini vector size, 128-3072 (1536)"
    )
    embedding.add_argument(
        "--batch-api", action="store_true", help="embed through Gemini's Batch API (half price)"
    )
    embedding.add_argument(
        "--clip-seconds",
        type=float,
        default=None,
        help=(
            f"longest video clip for Gemini (default: {VIDEO_WITH_AUDIO_SECONDS:g} with sound,"
            f" else {MAX_SECONDS['video']:g})"
        ),
    )
    embedding.add_argument(
        "--clip-overlap",
        type=float,
        default=None,
        help=f"seconds shared by consecutive clips (default: {DEFAULT_WINDOWS['video'][1]:g})",
    )

    listing = commands.add_parser(
        "list",
        help="the sources in the index",
        description="Each source: path or link, duration, moments by modality, language, "
        "speakers, when indexed, and failures with their reason.",
    )
    _index_option(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")

    remove = commands.add_parser(
        "remove",
        help="take sources out of the index",
        description="Remove a path or link: its moments, frames, clips and manifest entry "
        "(the file itself is left alone).",
    )
    remove.add_argument("sources", nargs="+", metavar="PATH|URL")
    _index_option(remove)
    _wait_options(remove)

    search = commands.add_parser(
        "search", help="ranked moments for a query", description="Print the best moments."
    )
    search.add_argument("query")
    _index_option(search)
    search.add_argument("--top-k", type=_positive_int, default=5, help="hits to return")
    search.add_argument(
        "--modality",
        type=_modalities,
        default=None,
        help=f"comma-separated subset of: {','.join(MODALITIES)}",
    )
    search.add_argument(
        "--speaker",
        type=_speakers,
        default=None,
        help="only what these speakers said, comma-separated (SPEAKER_2 or 2)",
    )
    search.add_argument("--json", action="store_true", help="print the JSON contract")
    _relevance_option(search)

    ask = commands.add_parser(
        "ask",
        help="answer a question from the index",
        description="Answer with cited moments. Without a language model: the best moments.",
    )
    ask.add_argument("question")
    _index_option(ask)
    ask.add_argument("--top-k", type=_positive_int, default=5, help="moments to consider")
    ask.add_argument("--json", action="store_true", help="print answer, citations and hits")
    _llm_options(ask)
    ask.add_argument(
        "--queries",
        type=_positive_int,
        default=1,
        help="search this many phrasings of the question (the LLM writes them), fused",
    )
    ask.add_argument(
        "--rerank",
        default=None,
        metavar="MODEL",
        help="rerank with a cross-encoder, e.g. cross-encoder/ms-marco-MiniLM-L-6-v2",
    )
    ask.add_argument("--no-stream", action="store_true", help="print the answer when complete")
    ask.add_argument(
        "--export",
        type=Path,
        default=None,
        metavar="FILE",
        help="also join the cited moments into FILE (subtitles in FILE.srt)",
    )
    _relevance_option(ask)

    serve = commands.add_parser(
        "serve",
        help="search, ask and play moments in a browser",
        description="Serve the index over HTTP with a web page; it never ingests, and picks "
        "up what 'ingest' adds without a restart. Binding beyond loopback needs a token.",
    )
    _index_option(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default: 8000)")
    serve.add_argument(
        "--token",
        default=None,
        help="required on every request (default: $LLAMA_INDEX_VIDEO_TOKEN)",
    )
    _llm_options(serve)
    _relevance_option(serve)

    add_mcp_parser(commands, _index_option)
    add_clip_parser(commands, _index_option)

    verify = commands.add_parser(
        "verify",
        help="check the index against its manifest; --repair fixes what it finds",
        description="Compare, per indexed file, the moments the manifest lists with those "
        "the vector store holds, and check that search reaches every stored one; list "
        "stray rows, orphan frames and clips, and partial files. Exit status 0 if all "
        "is well, 1 if problems were found (and not repaired).",
    )
    _index_option(verify)
    verify.add_argument(
        "--repair",
        action="store_true",
        help="delete stray rows, orphans and partial files; re-index files with missing "
        "moments from their recorded paths; embed again moments search cannot find",
    )
    verify.add_argument("--quiet", action="store_true", help="no progress bars")
    _wait_options(verify)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit status."""
    return _run(build_parser().parse_args(argv))


def console() -> NoReturn:
    """The ``llama-index-video`` executable: :func:`main` in a process of its own.

    A read-only command runs with the cyclic garbage collector off and leaves its
    objects out of the collections Python makes while it shuts down: with LlamaIndex,
    pydantic and Chroma loaded those cost about 0.3 s while running and 0.6-1 s at
    exit, a third of a cold ``search``, to free memory the process is about to give
    back anyway. Shutdown itself still happens (``atexit`` handlers, logging and output
    flushed, objects freed by reference counting); only objects caught in reference
    cycles are left to the operating system, so commands that write files keep the
    normal collection. Never done in :func:`main`, which callers run inside their
    own process.
    """
    args = build_parser().parse_args()
    read_only = args.command in READ_ONLY_COMMANDS
    if read_only:
        gc.disable()
    code = _run(args)
    if read_only:
        gc.freeze()
    sys.exit(code)


def _run(args: argparse.Namespace) -> int:
    _configure_logging(debug=args.debug)
    try:
        return int(_COMMANDS[args.command](args))
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except VideoIndexError as exc:
        if args.debug:
            print(scrubbed_traceback(exc), end="", file=sys.stderr)
        else:
            print(f"error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a bug: show where, but an SDK's message may hold the key
        print(scrubbed_traceback(exc), end="", file=sys.stderr)
        return EXIT_BUG


def _ingest(args: argparse.Namespace) -> int:
    from llama_index_video.cli.progress import ProgressBars
    from llama_index_video.embeddings.clip import DEFAULT_CLIP_MODEL, ClipEmbedding

    visual = (
        None if args.visual is None else ClipEmbedding(model_name=args.visual or DEFAULT_CLIP_MODEL)
    )
    try:
        options = _reader_options(args)
    except ValueError as exc:
        raise VideoIndexError(f"bad ingest option: {exc}") from exc
    try:
        index = _open_index(
            args.index,
            visual_model=visual,
            embed_model=_embedding_spec(args),
            reader_options=options,
            **_store_options(args),
        )
    except ValueError as exc:  # an option the index refuses: clip windows for a text model
        raise VideoIndexError(f"{args.index}: {exc}") from exc
    bars = ProgressBars(enabled=not args.quiet and sys.stderr.isatty())
    try:
        if args.prune:
            for source in index.prune(wait=args.wait):
                print(f"{'removed':8} {printable_path(source)} (file gone)")
        report = index.ingest(
            args.paths,
            progress=bars,
            executor=_executor(args.ray),
            wait=args.wait,
            downloads=_download_options(args),
        )
    finally:
        bars.close()
        index.close()
    _print_report(report, args.index)
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

    transcriber = {"model": args.whisper_model, "language": args.language}
    windows = {"video_seconds": args.clip_seconds, "video_overlap": args.clip_overlap}
    given = {key: value for key, value in windows.items() if value is not None}
    return ReaderOptions(
        transcriber=FasterWhisperTranscriber(
            **{key: value for key, value in transcriber.items() if value}
        ),
        use_subtitles=not args.no_subtitles,
        frames=None if args.no_frames else FrameSamplingOptions(interval=args.frame_interval),
        ocr=args.ocr,
        clips=ClipOptions(**given) if given else None,
        diarizer=_diarizer(args.speakers, args.diarizer),
    )


def _executor(ray_address: str | None) -> Executor | None:
    if ray_address is None:
        return None
    from llama_index_video.executor.ray import RayExecutor

    return RayExecutor(ray_address or None)


def _print_report(report: IngestReport, index_dir: Path) -> None:
    for outcome in report.files:
        detail = f" ({outcome.reason})" if outcome.reason else ""
        nodes = f", {outcome.node_count} moments" if outcome.outcome == "indexed" else ""
        shown = outcome.link or printable_path(outcome.path)
        print(f"{outcome.outcome:8} {shown}{nodes}{detail}")
    counts = {kind: len(report.of(kind)) for kind in ("indexed", "skipped", "failed")}
    print(", ".join(f"{n} {kind}" for kind, n in counts.items()) + f" -> {index_dir}")


def _verify(args: argparse.Namespace) -> int:
    from llama_index_video.cli.progress import ProgressBars

    index = _open_index(args.index, must_exist=True)
    bars = ProgressBars(enabled=not args.quiet and sys.stderr.isatty())
    try:
        check, report = index.verify(repair=args.repair, progress=bars, wait=args.wait)
    finally:
        bars.close()
        index.close()
    for source in check.sources:
        found = "?" if source.found is None else str(source.found)
        state = "ok" if not source.missing else f"{source.missing} missing"
        print(f"{state:12} {source.expected:6} listed {found:>6} stored  {source.source}")
    problems = {
        "stray rows (of no indexed file)": sum(len(ids) for ids in check.stray_rows.values()),
        "orphan frames and clips": len(check.orphan_media),
        "partial files": len(check.partial_files),
        "interrupted files": len(check.interrupted),
        "unfinished removals": len(check.removals),
        "files with missing moments": len(check.damaged),
    }
    for what, count in problems.items():
        if count:
            print(f"{what}: {count}" + (" (deleted)" if args.repair else ""))
    unreachable = sum(len(ids) for ids in check.unreachable.values())
    if unreachable:
        print(
            f"unreachable rows (stored, but search cannot find them): {unreachable}"
            + (" (embedded again)" if args.repair else "")
        )
    if check.lexical is not None and not check.lexical.ok:
        print(f"lexical index: {check.lexical}" + (" (rebuilt)" if args.repair else ""))
    if not check.counted:
        print("this vector store cannot count its rows; only the media folder was checked")
    if report is not None:
        _print_report(report, args.index)
        return 0 if report.ok else EXIT_FAILED_FILES
    if check.ok:
        print(
            f"ok: {len(check.sources)} files, everything the manifest lists is stored "
            "and found by search"
        )
        return 0
    print(f"problems found; run 'llama-index-video verify --repair --index {args.index}'")
    return EXIT_FAILED_FILES


def _download_options(args: argparse.Namespace) -> DownloadOptions:
    from llama_index_video.sources.download import DownloadOptions

    if args.max_download_mb <= 0:
        raise VideoIndexError("--max-download-mb must be > 0")
    return DownloadOptions(max_bytes=int(args.max_download_mb * 1_000_000))


def _list(args: argparse.Namespace) -> int:
    from dataclasses import asdict
    from datetime import datetime, timezone

    index = _open_index(args.index, must_exist=True, **_store_options(args))
    try:
        entries = index.library()
    finally:
        index.close()
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False))
        return 0
    if not entries:
        print("The index is empty.")
    for entry in entries:
        when = (
            datetime.fromtimestamp(entry.indexed_at, timezone.utc).strftime("%Y-%m-%d %H:%M")
            if entry.indexed_at
            else "?"
        )
        length = format_timestamp(entry.duration) if entry.duration is not None else "-"
        moments = ", ".join(f"{n} {kind}" for kind, n in sorted(entry.moments.items()))
        details = [length, moments or "no moments", entry.language or "", ", ".join(entry.speakers)]
        print(f"{entry.status:8} {entry.source}")
        print(f"         {' · '.join(d for d in details if d)} · {when} UTC")
        if entry.status != "indexed" and entry.reason:
            print(f"         {entry.reason}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    index = _open_index(args.index, must_exist=True, **_store_options(args))
    missing = 0
    try:
        for source in args.sources:
            if index.remove(source, wait=args.wait):
                print(f"{'removed':8} {source}")
            else:
                print(f"{'unknown':8} {source} (not in the index)", file=sys.stderr)
                missing += 1
    finally:
        index.close()
    return EXIT_FAILED_FILES if missing else 0


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


def _search(args: argparse.Namespace) -> int:
    index = _open_index(
        args.index, must_exist=True, **_search_options(args), **_store_options(args)
    )
    try:
        hits = index.search(
            args.query, top_k=args.top_k, modalities=args.modality, speakers=args.speaker
        )
    finally:
        index.close()
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("No relevant moments.")
    for rank, hit in enumerate(hits, start=1):
        speaker = f" {hit.speaker}" if hit.speaker else ""
        print(f"{rank}. {hit.label} {hit.modality}{speaker} score={hit.score}")
        print(f"   {hit.text}")
        if hit.url:
            print(f"   play: {hit.url}")
        if hit.frame_path:
            print(f"   frame: {hit.frame_path}")
    return 0


def _ask(args: argparse.Namespace) -> int:
    from llama_index_video.answering.answerer import AskOptions, make_llm, make_reranker

    llm = make_llm(args.llm, model=args.llm_model)
    if args.queries > 1 and llm is None:
        raise VideoIndexError("--queries needs a language model (--llm claude or gemini)")
    reranker = make_reranker(args.rerank, top_n=args.top_k) if args.rerank else None
    index = _open_index(
        args.index, must_exist=True, **_search_options(args), **_store_options(args)
    )
    options = AskOptions(top_k=args.top_k, num_queries=args.queries)
    try:
        answerer = index.answerer(llm=llm, options=options, reranker=reranker)
        stream = answerer.stream(args.question, streaming=not args.no_stream and not args.json)
        for delta in stream:
            if not args.json:
                print(delta, end="", flush=True)
        answer = stream.answer
        exported = _export(index, answer, args.export) if args.export else None
    finally:
        index.close()
    if exported:
        print(exported, file=sys.stderr)
    if args.json:
        print(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False))
        return 0
    print()
    if llm is not None and answer.citations:
        print("\nCited moments:")
        for citation in answer.citations:
            frame = f"  frame: {citation.frame_path}" if citation.frame_path else ""
            print(f"  {citation.label} play: {citation.url}{frame}")
    if answer.unverified:
        print(f"\nNot among the retrieved moments: {', '.join(answer.unverified)}")
    return 0


def _export(index: VideoIndex, answer: Any, output: Path) -> str:
    from llama_index_video.cli.export_command import export_answer

    return export_answer(index, answer, output)


def _serve(args: argparse.Namespace) -> int:
    from llama_index_video.service.server import serve

    serve(
        args.index,
        host=args.host,
        port=args.port,
        token=args.token,
        llm=args.llm,
        llm_model=args.llm_model,
        **_search_options(args),
        **_store_options(args),
    )
    return 0


def _store_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"chroma_url": args.chroma_url, "collection": args.collection}


def _open_index(path: Path, *, must_exist: bool = False, **options: object) -> VideoIndex:
    if must_exist and not (path / "manifest.sqlite").exists():
        raise VideoIndexError(
            f"{path}: no index here; create it with 'llama-index-video ingest PATH --index {path}'"
        )
    from llama_index_video.index import VideoIndex

    return VideoIndex(path, **options)  # type: ignore[arg-type]


def _llm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--llm",
        choices=["auto", "claude", "gemini", "none"],
        default="auto",
        help="who writes the answer; auto: Claude if ANTHROPIC_API_KEY is set, else Gemini "
        "if GEMINI_API_KEY is set, else none (the best moments, extractively)",
    )
    parser.add_argument("--llm-model", default=None, help="model name for --llm")


def _relevance_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--relevance",
        choices=["auto", "standout", "off"],
        default="auto",
        help="when the moments found are relevant enough to answer from; auto: the "
        "embedding model's default gate; standout: also turn away a question no moment of "
        "its recording clearly stands out for (near-topic questions); off: every moment "
        "above the similarity threshold",
    )
    parser.add_argument(
        "--lexical",
        choices=["on", "off"],
        default="on",
        help='also find moments by the query\'s exact words, numbers and "quoted phrases" '
        "(fused with the search by meaning); off: by meaning only (quoted phrases still "
        "must appear)",
    )


def _search_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--relevance`` and ``--lexical`` as ``VideoIndex`` takes them."""
    relevance = None if args.relevance == "off" else str(args.relevance)
    return {"relevance": relevance, "lexical": args.lexical == "on"}


def _wait_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--wait",
        type=_seconds,
        default=DEFAULT_WAIT_SECONDS,
        metavar="SECONDS",
        help="if another process is writing to the index, wait this long for it "
        f"(default: {DEFAULT_WAIT_SECONDS:.0f})",
    )
    group.add_argument(
        "--no-wait",
        dest="wait",
        action="store_const",
        const=0.0,
        help="fail at once if another process is writing to the index",
    )


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 7 * 24 * 3600:
        raise argparse.ArgumentTypeError("must be between 0 and 604800 seconds")
    return value


def _index_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index",
        type=Path,
        default=Path(os.environ.get("LLAMA_INDEX_VIDEO_INDEX", "video_index")),
        help="index folder (default: ./video_index, or $LLAMA_INDEX_VIDEO_INDEX)",
    )
    parser.add_argument(
        "--chroma-url",
        default=os.environ.get("LLAMA_INDEX_VIDEO_CHROMA_URL") or None,
        metavar="URL",
        help="a Chroma server (http://host:8000) holding the vectors; the index folder keeps "
        "the manifest and frames, and remembers the URL (default: $LLAMA_INDEX_VIDEO_CHROMA_URL; "
        "token from $LLAMA_INDEX_VIDEO_CHROMA_TOKEN)",
    )
    parser.add_argument(
        "--collection",
        default=None,
        metavar="NAME",
        help="Chroma collection of the index, one per index on a shared server "
        "(default: the one the folder recorded, else video_moments)",
    )


def _dimension(text: str) -> int:
    value = int(text)
    if not 128 <= value <= 3072:
        raise argparse.ArgumentTypeError("must be between 128 and 3072")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1 or value > 100:
        raise argparse.ArgumentTypeError("must be between 1 and 100")
    return value


def _modalities(text: str) -> list[str]:
    try:
        return parse_modalities(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _speakers(text: str) -> list[str]:
    try:
        return parse_speakers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _configure_logging(*, debug: bool) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(
        ScrubbingFormatter(
            "%(levelname)s %(name)s: %(message)s" if debug else "warning: %(message)s"
        )
    )
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler])
    if not debug:
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


_COMMANDS = {
    "ingest": _ingest,
    "list": _list,
    "remove": _remove,
    "search": _search,
    "ask": _ask,
    "serve": _serve,
    "mcp": lambda args: run_mcp(args, _store_options(args)),
    "clip": lambda args: run_clip(args, _store_options(args)),
    "verify": _verify,
}

if __name__ == "__main__":
    console()
