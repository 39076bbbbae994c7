"""The media zoo: small files built the way users' recordings are, by the ffmpeg binary.

Each :class:`ZooFile` is a recipe (ffmpeg arguments from synthetic sources or a piece of
the committed example media) plus what a player would report about the result. The
files are a few seconds long at low resolution, so the whole zoo is written in seconds
and nothing large is committed. Run on its own to keep a copy for manual checks::

    PYTHONPATH=.:tests python -m tests.zoo.make_zoo /tmp/zoo
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests_support import EXAMPLES

HUGE_DECLARED_SECONDS = 1e9
DAYS_DECLARED_SECONDS = 10_625_570  # about 123 days, what a damaged MP4 header claimed


@dataclass(frozen=True)
class ZooFile:
    """One zoo file: its name, how ffmpeg makes it, and what it holds.

    Attributes:
        name: File name (its suffix picks the container); also the test id.
        args: ffmpeg arguments between the binary and the output path.
        duration: Seconds of media actually in the file.
        has_video: It has a (non cover-art) video stream.
        has_audio: It has an audio stream.
        then: Rewrites the file after ffmpeg wrote it (to fake what ffmpeg will not write).
    """

    name: str
    args: tuple[str, ...]
    duration: float
    has_video: bool
    has_audio: bool
    then: Callable[[Path], None] | None = field(default=None, compare=False)


def _video(seconds: float, *, size: str = "96x54", rate: int = 15) -> tuple[str, ...]:
    return ("-f", "lavfi", "-i", f"testsrc=size={size}:rate={rate}:duration={seconds}")


def _tone(seconds: float, *, rate: int = 48000) -> tuple[str, ...]:
    return ("-f", "lavfi", "-i", f"sine=frequency=440:sample_rate={rate}:duration={seconds}")


def _opts(options: str) -> tuple[str, ...]:
    """Options written as on a command line (none of them contains a space)."""
    return tuple(options.split())


_H264 = _opts("-c:v libx264 -preset ultrafast -pix_fmt yuv420p")
_H264_AAC = (*_H264, *_opts("-c:a aac -b:a 48k"))
_CLIP = (*_video(3), *_tone(3))
_NO_ID3 = _opts("-id3v2_version 0 -write_id3v1 0")
_ID3 = _opts("-id3v2_version 3 -metadata title=Zoo -metadata artist=Tests")
_COVER = ("-f", "lavfi", "-i", "color=c=orange:size=64x64:duration=1")
# 45 frames: 15 fps for a second, then one every 0.2 s, then one every 0.05 s up to 4 s.
_VARIABLE_PTS = "setpts='if(lt(N,15),N/15,if(lt(N,25),1+(N-15)/5,3+(N-25)/20))/TB'"


def _declare_huge_duration(path: Path) -> None:
    """Overwrite the Matroska Segment Duration (ms, 8-byte float) with 1e9 s."""
    data = bytearray(path.read_bytes())
    at = data.find(b"\x44\x89\x88")  # element id 0x4489, size 8
    if at < 0:
        raise RuntimeError(f"{path}: no 8-byte Matroska Duration element to patch")
    data[at + 3 : at + 11] = struct.pack(">d", HUGE_DECLARED_SECONDS * 1000)
    path.write_bytes(bytes(data))


def _declare_days(path: Path) -> None:
    """Make the MP4 movie header (``mvhd``, version 0) declare about 123 days: a time
    scale of 1 per second and that many units."""
    data = bytearray(path.read_bytes())
    at = data.find(b"mvhd")
    if at < 0 or data[at + 4] != 0:
        raise RuntimeError(f"{path}: no version-0 mvhd box to patch")
    data[at + 16 : at + 24] = struct.pack(">II", 1, DAYS_DECLARED_SECONDS)
    path.write_bytes(bytes(data))


def _rotate(path: Path) -> None:
    """Add 90-degree rotation metadata, as a phone held sideways writes it."""
    rotated = path.with_name(f"rotated-{path.name}")
    _run([*_ffmpeg(), "-i", str(path), "-c", "copy", "-metadata:s:v:0", "rotate=90", str(rotated)])
    rotated.replace(path)


ZOO: tuple[ZooFile, ...] = (
    # Containers and codecs.
    ZooFile("mp4_h264_aac.mp4", (*_CLIP, *_opts("-c:v libx264 -c:a aac")), 3.0, True, True),
    ZooFile("mov_h264_aac.mov", (*_CLIP, *_H264_AAC), 3.0, True, True),
    ZooFile("mkv_h264_aac.mkv", (*_CLIP, *_H264_AAC), 3.0, True, True),
    ZooFile(
        "webm_vp9_opus.webm",
        (*_CLIP, *_opts("-c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 100k -c:a libopus")),
        3.0,
        True,
        True,
    ),
    ZooFile("avi_mpeg4_mp3.avi", (*_CLIP, *_opts("-c:v mpeg4 -c:a libmp3lame")), 3.0, True, True),
    ZooFile("m4a_aac.m4a", (*_tone(3), *_opts("-c:a aac")), 3.0, False, True),
    ZooFile("mp3_cbr.mp3", (*_tone(3, rate=44100), "-b:a", "64k", *_NO_ID3), 3.0, False, True),
    ZooFile("mp3_cbr_id3.mp3", (*_tone(3, rate=44100), "-b:a", "64k", *_ID3), 3.0, False, True),
    ZooFile("mp3_vbr.mp3", (*_tone(3, rate=44100), "-q:a", "5", *_NO_ID3), 3.0, False, True),
    ZooFile(
        "mp3_vbr_id3_cover.mp3",
        (
            *_tone(3, rate=44100),
            *_COVER,
            *_ID3,
            "-q:a",
            "5",
            *_opts("-map 0:a -map 1:v -frames:v 1 -c:v mjpeg -disposition:v attached_pic"),
        ),
        3.0,
        False,
        True,
    ),
    ZooFile("wav_u8_8k_mono.wav", (*_tone(2), *_opts("-c:a pcm_u8 -ar 8000")), 2.0, False, True),
    ZooFile(
        "wav_s16_16k_mono.wav", (*_tone(2), *_opts("-c:a pcm_s16le -ar 16000")), 2.0, False, True
    ),
    ZooFile(
        "wav_s24_44k_stereo.wav",
        (*_tone(2), *_opts("-c:a pcm_s24le -ar 44100 -ac 2")),
        2.0,
        False,
        True,
    ),
    ZooFile("wav_s16_48k_5.1.wav", (*_tone(2), *_opts("-c:a pcm_s16le -ac 6")), 2.0, False, True),
    ZooFile("flac_stereo.flac", (*_tone(2, rate=44100), "-ac", "2"), 2.0, False, True),
    ZooFile("ogg_vorbis.ogg", (*_tone(2, rate=44100), "-c:a", "libvorbis"), 2.0, False, True),
    ZooFile("opus_mono.opus", (*_tone(2), "-c:a", "libopus"), 2.0, False, True),
    # Other encoders' files (Windows Media, phones, Apple, Flash, broadcast).
    ZooFile("wmv_wmv2_wma.wmv", (*_CLIP, *_opts("-c:v wmv2 -c:a wmav2")), 3.0, True, True),
    ZooFile("wma_wmav2.wma", (*_tone(2), *_opts("-c:a wmav2 -b:a 48k")), 2.0, False, True),
    ZooFile(
        "phone_h263_aac_8k.3gp",
        (*_video(3, size="176x144"), *_tone(3), *_opts("-c:v h263 -c:a aac -ar 8000 -ac 1")),
        3.0,
        True,
        True,
    ),
    ZooFile("aiff_s16.aiff", (*_tone(2, rate=44100), "-c:a", "pcm_s16be"), 2.0, False, True),
    ZooFile(
        "flv_flv1_mp3.flv", (*_CLIP, *_opts("-c:v flv1 -c:a libmp3lame -ar 44100")), 3.0, True, True
    ),
    ZooFile("mpegts_h264_aac.ts", (*_CLIP, *_H264_AAC), 3.0, True, True),
    # Timing oddities.
    ZooFile(
        "odd_duration.mp4",
        (*_video(2.9884, rate=30), *_tone(2.9884, rate=44100), *_H264_AAC),
        2.99,
        True,
        True,
    ),
    ZooFile("audio_longer.mp4", (*_video(2), *_tone(3.5), *_H264_AAC), 3.5, True, True),
    ZooFile("video_longer.mp4", (*_video(3.5), *_tone(2), *_H264_AAC), 3.5, True, True),
    ZooFile("start_offset.mkv", (*_CLIP, *_H264_AAC, "-output_ts_offset", "7"), 3.0, True, True),
    ZooFile("program_stream.mpg", (*_CLIP, *_opts("-c:v mpeg2video -c:a mp2")), 3.0, True, True),
    ZooFile(
        "variable_rate.mkv",
        (*_video(3), "-vf", _VARIABLE_PTS, "-fps_mode", "vfr", *_H264),
        4.05,
        True,
        False,
    ),
    ZooFile(
        "one_keyframe.mp4",
        (*_video(4), *_tone(4), *_H264_AAC, *_opts("-g 100000 -keyint_min 100000 -sc_threshold 0")),
        4.0,
        True,
        True,
    ),
    ZooFile("all_keyframes.mp4", (*_CLIP, *_H264_AAC, "-g", "1"), 3.0, True, True),
    ZooFile("one_frame.mp4", (*_video(1), "-frames:v", "1", *_H264), 1 / 15, True, False),
    ZooFile("half_second.mp4", (*_video(0.5), *_tone(0.5), *_H264_AAC), 0.5, True, True),
    ZooFile("rotated.mp4", (*_CLIP, *_H264_AAC), 3.0, True, True, then=_rotate),
    ZooFile(
        "portrait_phone.mp4",
        (*_video(2, size="54x96", rate=30), *_tone(2), *_H264_AAC, "-ac", "2"),
        2.0,
        True,
        True,
    ),
    ZooFile(
        "huge_declared_duration.mkv",
        (*_CLIP, *_H264_AAC),
        3.0,
        True,
        True,
        then=_declare_huge_duration,
    ),
    ZooFile(
        "days_declared_duration.mp4",
        (*_CLIP, *_H264_AAC),
        3.0,
        True,
        True,
        then=_declare_days,
    ),
    ZooFile(
        "example_excerpt.mov",
        (
            "-ss",
            "20",
            "-t",
            "3",
            "-i",
            str(EXAMPLES / "ozone_explainer.mp4"),
            "-vf",
            "scale=128:-2",
            *_H264_AAC,
        ),
        3.0,
        True,
        True,
    ),
)


def _ffmpeg() -> list[str]:
    """The ffmpeg binary on PATH (``scripts/test.sh`` installs it), quiet and non-interactive."""
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise RuntimeError("the media zoo needs ffmpeg on PATH (apt-get install ffmpeg)")
    return [exe, "-nostdin", "-hide_banner", "-loglevel", "error", "-y"]


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip()[-800:]}")


def make_zoo(folder: Path) -> dict[str, Path]:
    """Write every :data:`ZOO` file into ``folder``; returns their paths by name."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for item in ZOO:
        path = folder / item.name
        _run([*_ffmpeg(), *item.args, str(path)])
        if item.then is not None:
            item.then(path)
        paths[item.name] = path
    return paths


if __name__ == "__main__":
    for name, written in make_zoo(Path(sys.argv[1])).items():
        print(f"{written.stat().st_size:>8} {name}")
