"""What the local text embedding holds in memory: an ingest of long real transcripts, then
the service answering queries over them.

    python benchmarks/embedding_memory.py --baseline-ref REF [--rounds 2] [--text more.txt]

The reference transcripts of ``benchmarks/long_real`` (real readings of 12, 19 and 33
minutes, their sources and licences in the JSON beside each) are written as ``.txt``
files, with any ``--text`` file, and ingested by one ``llama-index-video ingest`` of this
checkout and of ``--baseline-ref``'s code, rounds alternating. A text document is cut
into chunks of 512 tokens, longer than the 256 all-MiniLM-L6-v2 reads: these are the
long texts of an ingest. Each ingest is timed as a whole process (CPU seconds, peak
resident memory). Then ``serve`` answers ``--queries`` searches over that version's index
(one in ten a pasted passage of 120 words) and the service's CPU seconds, peak and final
resident memory are printed. First, in a child process per version, the embedding alone
embeds ``--passages`` passages of 400 words (256 tokens each) in calls of 32, as an
ingest of text documents does (``--words 5,9,40,120``: passages of these lengths in
turn): its CPU seconds and peak and final resident memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.baseline import (  # noqa: E402
    Version,
    compiled_env,
    load_average,
    measured_in,
    release,
    run,
    today,
)
from benchmarks.service_load import HOST, _free_port, _start  # noqa: E402

TRANSCRIPTS = sorted((ROOT / "benchmarks" / "long_real").glob("*.json"))
QUESTIONS = (
    "what was printed in the fifteenth century",
    "who wrote about the art of printing",
    "when did the reader describe the old books",
    "the history of type and paper",
    "why were the letters so beautiful",
)

PROBE = """
import json, resource, time
from llama_index_video.embeddings.local import local_embedding
texts = json.loads(open({path!r}, encoding="utf-8").read())
model = local_embedding()
model.get_query_embedding("warm up")
started = time.process_time()
model.get_text_embedding_batch(texts)
cpu = time.process_time() - started
status = open("/proc/self/status").read().split("VmRSS:")[1]
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"cpu_s": cpu, "peak_mb": peak, "held_mb": int(status.split()[0]) / 1024}}))
"""


def write_texts(folder: Path, extra: list[Path]) -> list[str]:
    """The transcripts as ``.txt`` files in ``folder``; their words, for long queries."""
    words: list[str] = []
    for path in TRANSCRIPTS:
        about = json.loads(path.read_text(encoding="utf-8"))
        text = " ".join(turn["text"] for turn in about["turns"])
        (folder / f"{path.stem}.txt").write_text(text, encoding="utf-8")
        words += text.split()
    for path in extra:
        (folder / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return words


def queries(words: list[str], count: int) -> list[str]:
    passages = [" ".join(words[at : at + 120]) for at in range(0, len(words) - 120, 997)]
    return [
        passages[n // 10 % len(passages)] if n % 10 == 9 else QUESTIONS[n % len(QUESTIONS)]
        for n in range(count)
    ]


def serve(version: Version, index: Path, asked: list[str]) -> dict[str, float]:
    """The service's CPU seconds, peak and final resident MB over ``asked``, p50 ms."""
    port = _free_port()
    env = compiled_env(version)
    server = _start(index, port, env=env, cwd=version.source)
    try:
        latencies = []
        for query in asked:
            started = time.perf_counter()
            url = f"http://{HOST}:{port}/api/search?" + urllib.parse.urlencode({"q": query})
            with urllib.request.urlopen(url, timeout=120) as answer:
                answer.read()
            latencies.append((time.perf_counter() - started) * 1000)
        status = Path(f"/proc/{server.pid}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines())
        ticks = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return {
            "cpu_s": (int(ticks[11]) + int(ticks[12])) / 100,
            "peak_mb": int(fields["VmHWM"].split()[0]) / 1024,
            "held_mb": int(fields["VmRSS"].split()[0]) / 1024,
            "p50_ms": statistics.median(latencies),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", required=True, metavar="REF")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passages", type=int, default=96)
    parser.add_argument("--words", default="400", help="words per passage, comma-separated")
    parser.add_argument("--text", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    versions = [today(), release(args.baseline_ref)]
    with tempfile.TemporaryDirectory(prefix="embedding-memory-") as work:
        texts = Path(work) / "texts"
        texts.mkdir()
        words = write_texts(texts, args.text)
        asked = queries(words, args.queries)
        passages = Path(work) / "passages.json"
        lengths = [int(count) for count in args.words.split(",")]
        step = (len(words) - max(lengths)) // args.passages
        chosen = [
            " ".join(words[n * step : n * step + lengths[n % len(lengths)]])
            for n in range(args.passages)
        ]
        passages.write_text(json.dumps(chosen), encoding="utf-8")
        for number in range(args.rounds):
            for version in versions if number % 2 == 0 else versions[::-1]:
                probe = measured_in(version, PROBE.format(path=str(passages)), timeout=3600)
                print(
                    f"round {number + 1} {version.name:<22} {args.passages} passages of "
                    f"{args.words} words in calls of 32: {probe['cpu_s']:5.1f} CPU s, "
                    f"{probe['peak_mb']:5.0f} MB peak, "
                    f"{probe['held_mb']:5.0f} MB held after (load {load_average()})",
                    flush=True,
                )
        for number in range(args.rounds):
            for version in versions if number % 2 == 0 else versions[::-1]:
                index = Path(work) / f"index-{number}-{version.source.name}"
                env = compiled_env(version)
                ingest = run(
                    version.cli("ingest", str(texts), "--index", str(index), "--quiet"),
                    env,
                    timeout=3600,
                )
                if ingest.returncode != 0:
                    raise SystemExit(f"{version.name}: ingest failed:\n{ingest.stderr}")
                service = serve(version, index, asked)
                print(
                    f"round {number + 1} {version.name:<22} ingest {ingest.cpu_s:6.1f} CPU s "
                    f"{ingest.peak_rss_mb:6.0f} MB peak | service {service['cpu_s']:5.1f} CPU s "
                    f"for {len(asked)} searches, p50 {service['p50_ms']:5.1f} ms, peak "
                    f"{service['peak_mb']:4.0f} MB, held {service['held_mb']:4.0f} MB "
                    f"(load {load_average()})",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
