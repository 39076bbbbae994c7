"""Real speech as encoders, containers and damage the suite's own media never come in,
ingested and searched through the command line as a new user would.

    python benchmarks/media_encoders.py DIR [--code TREE ...]

Every recording holds the same 24.7 s of a LibriVox volunteer reading (the suite's
``tests/fixtures/speech/librivox_en.flac``, public domain; its sentence times in the JSON
beside it). Each :data:`CASES` entry writes it another way with the system ``ffmpeg`` (or
PyAV, for the AMR-NB encoder the system build lacks): a phone memo, a screen recording,
a conferencing tool's tracks, an editor's export. All of them and the bad files of
:data:`BAD` go into one folder, ingested with one ``ingest`` (as a new user points it at
a folder). Each recording is then searched (``search --json --source FILE``) for a
sentence said at a known time; the first hit is right when it starts within
:data:`TOLERANCE_SECONDS` of that sentence on the file's own timeline. A bad file is right
when its line is one line naming it and saying what is wrong, with no traceback.

``--code`` runs the command line of each given source tree (e.g. a ``git archive main``
copy) in turn, so a fix is measured against its baseline in the same run; the default is
this checkout. There are no model downloads: ``tiny.en`` and the default embedding come
from the local cache. The figures are in docs/evaluation.md, *Media from other encoders*.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import av

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402

SPEECH = ROOT / "tests" / "fixtures" / "speech" / "librivox_en.flac"
QUERY = "rather cold hearted and selfish"
SAID_AT = 10.36  # the sentence's start in SPEECH (its JSON)
SPEECH_SECONDS = 24.73
TOLERANCE_SECONDS = 3.0


@dataclass(frozen=True)
class Case:
    """One way a recording is written.

    Attributes:
        name: File name; its suffix picks the container.
        write: Writes the file at the path given.
        offset: Seconds the speech starts after the file's own zero.
    """

    name: str
    write: Callable[[Path], None]
    offset: float = 0.0


def ffmpeg(*args: str) -> None:
    """Run the system ffmpeg quietly, failing on its errors."""
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", *args]
    subprocess.run(command, check=True, timeout=600)


def _encoded(*options: str) -> Callable[[Path], None]:
    """The speech alone, with these output options."""
    return lambda path: ffmpeg("-i", str(SPEECH), *options, str(path))


def _picture(seconds: float, size: str = "320x180", rate: int = 10) -> tuple[str, ...]:
    return ("-f", "lavfi", "-i", f"testsrc2=size={size}:rate={rate}:duration={seconds}")


def _filmed(*options: str, seconds: float = SPEECH_SECONDS) -> Callable[[Path], None]:
    """A moving picture beside the speech, with these output options."""
    return lambda path: ffmpeg(*_picture(seconds), "-i", str(SPEECH), *options, str(path))


_H264 = ("-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
_REALTIME = ("-deadline", "realtime", "-cpu-used", "8")
# A screen recorder's variable rate: 10 frames a second for 5 s, then one every 2 s.
_STILL_AFTER_5S = "setpts='if(lt(N,50),N/10,5+(N-50)/2)/TB'"
_COVER = ("-f", "lavfi", "-i", "color=c=orange:size=300x300:duration=1", "-frames:v", "1")


def _with_cover(picture_codec: str, *options: str) -> Callable[[Path], None]:
    """The speech with a cover picture (an ``attached_pic`` video stream)."""
    return lambda path: ffmpeg(
        *("-i", str(SPEECH), *_COVER, "-map", "0:a", "-map", "1:v", "-c:v", picture_codec),
        *(*options, "-disposition:v", "attached_pic", str(path)),
    )


def _piped_vbr_mp3(path: Path) -> None:
    """A VBR MP3 written to a pipe, so without the Xing frame that counts its frames,
    opening with 20 s of silence (FFmpeg guesses its length from the silence's bit rate)."""
    ffmpeg(
        *("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono:d=20", "-i", str(SPEECH)),
        *("-filter_complex", "[0][1]concat=n=2:v=0:a=1", "-c:a", "libmp3lame", "-q:a", "6"),
        *("-write_xing", "0", str(path)),
    )


def _amr_nb(path: Path) -> None:
    """A phone memo: AMR-NB at 8 kHz, 12.2 kbit/s (PyAV's encoder; the system ffmpeg lacks it)."""
    with av.open(str(SPEECH)) as source, av.open(str(path), "w", format="amr") as out:
        stream = out.add_stream("libopencore_amrnb", rate=8000, layout="mono")
        stream.bit_rate = 12200
        resampler = av.AudioResampler(format="s16", layout="mono", rate=8000, frame_size=160)
        for frame in source.decode(audio=0):
            for piece in resampler.resample(frame):
                out.mux(stream.encode(piece))
        for piece in resampler.resample(None):
            out.mux(stream.encode(piece))
        out.mux(stream.encode(None))


def _phone_3gp(path: Path) -> None:
    """A feature phone's video: H.263 176x144 beside AMR-NB."""
    memo = path.with_suffix(".amr.tmp")
    _amr_nb(memo)
    ffmpeg(
        *_picture(SPEECH_SECONDS, "176x144"),
        *("-f", "amr", "-i", str(memo), "-c:v", "h263", "-c:a", "copy", "-shortest", str(path)),
    )
    memo.unlink()


def _silent_first_track(path: Path) -> None:
    """A conferencing export: a video, a silent first track, the speech second."""
    ffmpeg(
        *_picture(SPEECH_SECONDS),
        *("-f", "lavfi", "-i", f"anullsrc=r=48000:cl=mono:d={SPEECH_SECONDS}"),
        *("-i", str(SPEECH), "-map", "0:v", "-map", "1:a", "-map", "2:a", *_H264),
        *("-c:a", "libopus", "-shortest", str(path)),
    )


def _rotated(path: Path) -> None:
    """A phone held sideways: a portrait display matrix on a landscape picture."""
    plain = path.with_name(f"plain-{path.name}")
    _filmed(*_H264, "-c:a", "aac")(plain)
    ffmpeg("-i", str(plain), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(path))
    plain.unlink()


CASES: tuple[Case, ...] = (
    Case("opus.ogg", _encoded("-c:a", "libopus", "-b:a", "24k")),
    Case("vorbis.ogg", _encoded("-c:a", "libvorbis")),
    Case("vp9_opus.webm", _filmed("-c:v", "libvpx-vp9", *_REALTIME, "-c:a", "libopus")),
    Case("vp8_vorbis.webm", _filmed("-c:v", "libvpx", *_REALTIME, "-c:a", "libvorbis")),
    Case("phone_memo.amr", _amr_nb),
    Case("phone.3gp", _phone_3gp),
    Case("pcm.avi", _filmed("-c:v", "mpeg4", "-c:a", "pcm_s16le")),
    Case("mp3.avi", _filmed("-c:v", "mpeg4", "-c:a", "libmp3lame")),
    Case("alac.mov", _filmed(*_H264, "-c:a", "alac")),
    Case("pcm.mov", _filmed(*_H264, "-c:a", "pcm_s24le")),
    Case("alac.m4a", _encoded("-c:a", "alac")),
    Case("alac.caf", _encoded("-c:a", "alac")),
    Case("pcm.caf", _encoded("-c:a", "pcm_s16le")),
    Case("picture.flac", _with_cover("png")),
    Case("cover_art.mp3", _with_cover("mjpeg", "-id3v2_version", "3")),
    Case("piped_vbr.mp3", _piped_vbr_mp3, offset=20.0),
    Case("wmav2.wma", _encoded("-c:a", "wmav2", "-b:a", "64k")),
    Case("wmv2_wma.wmv", _filmed("-c:v", "wmv2", "-c:a", "wmav2")),
    Case("silent_first_track.mkv", _silent_first_track),
    Case("aac_5.1.m4a", _encoded("-af", "pan=5.1|FC=c0", "-c:a", "aac", "-ar", "48000")),
    Case("u8.wav", _encoded("-c:a", "pcm_u8")),
    Case("s24.wav", _encoded("-c:a", "pcm_s24le")),
    Case("f32.wav", _encoded("-c:a", "pcm_f32le")),
    Case("s24_96k.wav", _encoded("-c:a", "pcm_s24le", "-ar", "96000")),
    Case(
        "screen_vfr.mkv",
        _filmed(*_H264, "-vf", _STILL_AFTER_5S, "-fps_mode", "vfr", "-c:a", "aac"),
    ),
    Case("rotated.mp4", _rotated),
    Case(
        "audio_3s_late.mp4",
        lambda path: ffmpeg(
            *_picture(SPEECH_SECONDS + 3),
            "-itsoffset",
            "3",
            "-i",
            str(SPEECH),
            *_H264,
            "-c:a",
            "aac",
            str(path),
        ),
        offset=3.0,
    ),
    Case("short_audio.mp4", _filmed(*_H264, "-c:a", "aac", seconds=60)),
)


def _truncated(path: Path, source_case: Case) -> None:
    whole = path.with_name(f"whole-{path.name}")
    source_case.write(whole)
    data = whole.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    whole.unlink()


BAD: dict[str, Callable[[Path], object]] = {
    "notes.mp3": lambda path: path.write_bytes(b"# Meeting notes\nNothing to see here.\n" * 40),
    "cut_short.webm": lambda path: _truncated(path, CASES[2]),  # VP9 and Opus
    "cut_short.mp3": lambda path: _truncated(path, Case("x.mp3", _encoded("-c:a", "libmp3lame"))),
    "empty.m4a": lambda path: path.touch(),
    "no_audio.mp4": lambda path: ffmpeg(*_picture(10), *_H264, str(path)),
    "folder.mp4": lambda path: path.mkdir(),
    "loop.mp4": lambda path: path.symlink_to(path.name),
    "Besprechung Ä 東京\nzweite Zeile.opus": _encoded("-c:a", "libopus"),
}


@dataclass(frozen=True)
class Outcome:
    name: str
    line: str
    start: float | None = None

    def right(self, offset: float) -> bool:
        return self.start is not None and abs(self.start - SAID_AT - offset) <= TOLERANCE_SECONDS


def build(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        case.write(folder / case.name)
    for name, write in BAD.items():
        write(folder / name)


def _cli(code: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, "-m", "llama_index_video.cli.main", *args]
    # from inside the tree: ``-m`` puts the working directory first on the path
    return subprocess.run(command, cwd=code, env=env, capture_output=True, text=True, timeout=3600)


def measure(code: Path, media: Path, index: Path) -> tuple[dict[str, str], float]:
    """Each file's ingest line (stdout and stderr, by file name) and the CPU seconds spent."""
    shutil.rmtree(index, ignore_errors=True)
    before = os.times()
    ran = _cli(code, "ingest", "--index", str(index), "--quiet", str(media))
    after = os.times()
    spent = sum(after[:4]) - sum(before[:4])  # user and system, of this process and children
    lines: dict[str, str] = {}
    output = ran.stdout + ran.stderr
    for name in [case.name for case in CASES] + list(BAD):
        shown = name.replace("\n", "\\n")
        lines[name] = " | ".join(
            line.strip() for line in output.splitlines() if shown in line or name in line
        )
    if "Traceback" in output:
        lines["(traceback)"] = output[output.index("Traceback") :][:2000]
    return lines, spent


def first_start(code: Path, index: Path, path: Path) -> float | None:
    ran = _cli(code, "search", "--index", str(index), "--json", "--source", str(path), QUERY)
    try:
        hits = json.loads(ran.stdout)
    except json.JSONDecodeError:
        return None
    return hits[0]["start"] if hits else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="where the media and indexes are written")
    parser.add_argument("--code", type=Path, action="append", help="source trees to run")
    args = parser.parse_args(argv)
    media = args.folder / "media"
    if not media.exists():
        build(media)
    for code in args.code or [ROOT]:
        started = time.monotonic()
        lines, cpu = measure(code, media, args.folder / f"index-{code.name}")
        right = 0
        print(f"## {code} (load {load_average()})")
        for case in CASES:
            start = first_start(code, args.folder / f"index-{code.name}", media / case.name)
            outcome = Outcome(case.name, lines[case.name], start)
            right += outcome.right(case.offset)
            expected = SAID_AT + case.offset
            shown = "none" if start is None else f"{start:.1f}"
            mark = "right" if outcome.right(case.offset) else "WRONG"
            said = f"first hit {shown} s (said at {expected:.1f})"
            print(f"{case.name:24} {mark:5} {said} | {outcome.line}")
        for name in BAD:
            print(f"{name!r:24} | {lines[name] or '(no line)'}")
        if "(traceback)" in lines:
            print(lines["(traceback)"])
        wall = time.monotonic() - started
        print(f"{right}/{len(CASES)} right; ingest {cpu:.1f} CPU s; {wall:.0f} s wall")
        print(f"(load {load_average()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
