"""The command line's parser: every subcommand, its options and their types.

Building the parser imports nothing heavy, so ``--help`` stays fast; the commands
themselves are :mod:`llama_index_video.cli.commands`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from llama_index_video._version import __version__
from llama_index_video.cli.clip_command import add_clip_parser
from llama_index_video.cli.mcp_command import add_mcp_parser
from llama_index_video.cli.meeting_commands import add_chapters_parser, add_summarize_parser
from llama_index_video.cli.options import index_option, seconds, wait_options
from llama_index_video.cli.speakers_command import add_speakers_parser
from llama_index_video.cli.transcript_command import add_transcript_parser
from llama_index_video.media.limits import DEFAULT_WINDOWS, MAX_SECONDS, VIDEO_WITH_AUDIO_SECONDS
from llama_index_video.schema import MODALITIES, parse_modalities
from llama_index_video.speakers.base import parse_speakers
from llama_index_video.watch import DEFAULT_SETTLE_SECONDS


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
    index_option(ingest)
    _reading_options(ingest)
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
    ingest.add_argument(
        "--live",
        action="store_true",
        help="PATH is still being recorded (WAV, MP3, Ogg, MKV/WebM, fragmented MP4), or is a "
        "stream URL (HLS .m3u8, rtsp://, HTTP/Icecast audio), recorded into the index folder: "
        "index its speech and frames in chunks as they arrive, then the whole recording once "
        "it ends",
    )
    ingest.add_argument(
        "--chunk-seconds",
        type=float,
        default=30.0,
        help="with --live: seconds of audio per chunk, at least (up to 30 when behind; "
        "default: 30)",
    )
    ingest.add_argument(
        "--live-settle",
        type=float,
        default=10.0,
        help="with --live: the recording has ended when the file has not grown (the stream "
        "has sent nothing) for this many seconds (default: 10; a file empty or of whole 4 KiB "
        "blocks, as a recorder's buffer leaves it, waits longer: 524 s until it has grown twice)",
    )
    ingest.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        help="with --live: the recording has ended once the file (the stream's copy) is this large",
    )
    ingest.add_argument(
        "--max-hours",
        type=float,
        default=12.0,
        help="with --live: stop following the file or stream after this many hours (default: 12)",
    )
    wait_options(ingest)

    watch = commands.add_parser(
        "watch",
        help="keep the index in step with folders",
        description="Index what appears or changes in the folders (recursively) once it "
        "has stopped growing, and remove what disappears, until Ctrl-C or SIGTERM (which "
        "finish the ingest under way). One line per file.",
    )
    watch.add_argument("folders", nargs="+", type=Path, metavar="DIR")
    index_option(watch)
    _reading_options(watch)
    watch.add_argument(
        "--settle",
        type=seconds,
        default=DEFAULT_SETTLE_SECONDS,
        metavar="SECONDS",
        help="ingest a file once its size and time have not changed for this long "
        f"(default: {DEFAULT_SETTLE_SECONDS:g})",
    )
    watch.add_argument(
        "--poll",
        type=_positive_seconds,
        default=None,
        metavar="SECONDS",
        help="scan the folders every SECONDS instead of waiting for file events (network mounts)",
    )
    watch.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    wait_options(watch)

    listing = commands.add_parser(
        "list",
        help="the sources in the index",
        description="Each source: path or link, duration, moments by modality, language, "
        "speakers, when indexed, and failures with their reason.",
    )
    index_option(listing)
    listing.add_argument("--json", action="store_true", help="print JSON")

    remove = commands.add_parser(
        "remove",
        help="take sources out of the index",
        description="Remove a path or link: its moments, frames, clips and manifest entry "
        "(the file itself is left alone).",
    )
    remove.add_argument("sources", nargs="+", metavar="PATH|URL")
    index_option(remove)
    wait_options(remove)

    search = commands.add_parser(
        "search", help="ranked moments for a query", description="Print the best moments."
    )
    search.add_argument("query")
    index_option(search)
    search.add_argument("--top-k", type=_positive_int, default=5, help="hits to return")
    search.add_argument(
        "--modality",
        type=_modalities,
        default=None,
        help=f"comma-separated subset of: {','.join(MODALITIES)}",
    )
    _speaker_option(search)
    _language_option(search)
    search.add_argument(
        "--by-chapter",
        action="store_true",
        help="score each moment with its chapter's match too (topic questions)",
    )
    _named_speaker_option(search)
    search.add_argument(
        "--source",
        action="append",
        metavar="SOURCE",
        help="only the moments of this recording (its path, file name or link, as 'list' "
        "shows it); repeat for several",
    )
    search.add_argument("--json", action="store_true", help="print the JSON contract")
    _relevance_option(search)

    ask = commands.add_parser(
        "ask",
        help="answer a question from the index",
        description="Answer with cited moments. Without a language model: the best moments.",
    )
    ask.add_argument("question")
    index_option(ask)
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
    _language_option(ask)
    _speaker_option(ask)
    _named_speaker_option(ask)
    ask.add_argument(
        "--export",
        type=Path,
        default=None,
        metavar="FILE",
        help="also join the cited moments into FILE, with what was said as a subtitle "
        "track (MP4, MOV, MKV) and in FILE.srt",
    )
    ask.add_argument(
        "--burn-subtitles",
        action="store_true",
        help="with --export: draw the subtitles onto the frames instead (re-encodes)",
    )
    _relevance_option(ask)

    serve = commands.add_parser(
        "serve",
        help="search, ask and play moments in a browser",
        description="Serve the index over HTTP with a web page; it never ingests, and picks "
        "up what 'ingest' adds without a restart. Binding beyond loopback needs a token.",
    )
    index_option(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default: 8000)")
    serve.add_argument(
        "--token",
        default=None,
        help="required on every request (default: $LLAMA_INDEX_VIDEO_TOKEN)",
    )
    serve.add_argument(
        "--watch",
        action="append",
        type=Path,
        metavar="DIR",
        help="also run 'watch DIR' beside the service (repeat for more folders)",
    )
    _llm_options(serve)
    _relevance_option(serve)

    add_mcp_parser(commands)
    add_clip_parser(commands)
    add_transcript_parser(commands)
    add_speakers_parser(commands)
    add_chapters_parser(commands)
    add_summarize_parser(commands)

    verify = commands.add_parser(
        "verify",
        help="check the index against its manifest; --repair fixes what it finds",
        description="Compare, per indexed file, the moments the manifest lists with those "
        "the vector store holds, and check that search reaches every stored one; list "
        "stray rows, orphan frames and clips, and partial files. Exit status 0 if all "
        "is well, 1 if problems were found (and not repaired).",
    )
    index_option(verify)
    verify.add_argument(
        "--repair",
        action="store_true",
        help="delete stray rows, orphans and partial files; re-index files with missing "
        "moments from their recorded paths; embed again moments search cannot find",
    )
    verify.add_argument("--quiet", action="store_true", help="no progress bars")
    wait_options(verify)
    _reading_options(verify)  # how --repair reads a file again: as it was ingested
    return parser


def _reading_options(parser: argparse.ArgumentParser) -> None:
    """How files are read and embedded: ``ingest``, ``watch`` and ``verify`` (for
    ``--repair``) take the same flags."""
    parser.add_argument(
        "--no-subtitles", action="store_true", help="always transcribe, ignore subtitle files"
    )
    parser.add_argument(
        "--audio-track",
        type=int,
        default=1,
        metavar="N",
        help="the audio track to hear in files with several, from 1 (default: the first)",
    )
    parser.add_argument(
        "--lead-in",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="prompt each 10-minute chunk of a long recording with what was said in the "
        "SECONDS before it (e.g. 60; default 0: none)",
    )
    parser.add_argument(
        "--mix-channels",
        action="store_true",
        help="hear stereo mixed to one even when each channel holds its own voice",
    )
    parser.add_argument(
        "--frame-interval", type=float, default=5.0, help="seconds between sampled frames"
    )
    parser.add_argument("--no-frames", action="store_true", help="do not sample frames")
    parser.add_argument(
        "--ocr",
        choices=("auto", "rapidocr", "tesseract", "off"),  # ocr.OCR_CHOICES, kept light
        default="auto",
        help="engine reading on-screen text of frames (default: rapidocr when installed)",
    )
    parser.add_argument(
        "--ocr-languages",
        metavar="LANGS",
        help="read on-screen text with tesseract in these languages, its codes joined by + "
        "(e.g. deu+eng; each needs its data: apt-get install tesseract-ocr-deu)",
    )
    parser.add_argument(
        "--visual",
        nargs="?",
        const="",
        default=None,
        metavar="MODEL",
        help="also embed frames by their pixels for visual search, with a CLIP-family model "
        "(default: openai/clip-vit-base-patch32, downloaded on first use); "
        "chosen when the index is created",
    )
    parser.add_argument(
        "--whisper-model",
        default=None,
        help="faster-whisper model name or folder (default: tiny.en, offline copy if installed)",
    )
    parser.add_argument(
        "--language", default=None, help="spoken language, e.g. 'de' (default: detect)"
    )
    parser.add_argument(
        "--speakers",
        nargs="?",
        const="auto",
        default=None,
        metavar="N",
        help="label who spoke in each transcript unit; N: how many speakers there are "
        "(default: estimated, up to 16)",
    )
    parser.add_argument(
        "--diarizer",
        choices=("campplus", "resemblyzer", "pyannote"),
        default="campplus",
        help="speaker backend for --speakers: campplus (offline, default), resemblyzer "
        "(offline, older) or pyannote (needs HF_TOKEN)",
    )
    embedding = parser.add_argument_group(
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


def _llm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--llm",
        choices=["auto", "claude", "gemini", "none"],
        default="auto",
        help="who writes the answer; auto: Claude if ANTHROPIC_API_KEY is set, else Gemini "
        "if GEMINI_API_KEY is set, else none (the best moments, extractively)",
    )
    parser.add_argument("--llm-model", default=None, help="model name for --llm")


def _speaker_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--speaker",
        type=_speakers,
        default=None,
        help="only what these speakers said, comma-separated (SPEAKER_2, 2, or a name given "
        "with 'speakers name')",
    )


def _named_speaker_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--by-named-speaker",
        action="store_true",
        help="a question naming a speaker as the one speaking ('what did the designer say "
        "about ...') finds only what that speaker said",
    )


def _language_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--language",
        type=_languages,
        default=None,
        help="only what was said in these languages, comma-separated (fr, FR, fr-FR or "
        "French; frames, on-screen text and documents have no language)",
    )


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


def _positive_seconds(text: str) -> float:
    value = seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


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


def _languages(text: str) -> list[str]:
    from llama_index_video.transcription.language import language_codes

    try:
        return language_codes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _speakers(text: str) -> list[str]:
    try:
        return parse_speakers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
