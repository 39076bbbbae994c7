"""Where a cut moment starts: the first sound and picture of a clip against the times asked.

    python benchmarks/clip_starts.py [--baseline-ref REF]

Synthetic fixtures with known events, made here with PyAV: a 12 s H.264/AAC video
(keyframes every 2 s) whose picture turns white and whose 1 kHz tone sounds at 5.0 s and
9.0 s, and the same sound alone as MP3, M4A (AAC), Opus and WAV. Each is cut with
:func:`~llama_index_video.media.export.export_span` (``clip`` and the page's download) at
starts before, on and just after an event, and the clip is decoded: an event's time in
the clip, less where it should be (its time in the decoded recording less the start the
export reports), is how late the clip runs (``late_ms``); ``head_ms`` is how far the
reported start lies from the start asked (a stream copy begins at the keyframe before).
Each version (this checkout; with ``--baseline-ref`` also that commit's code) runs in a
child process of its own.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.baseline import Version, load_average, measured_in, release, today

EVENTS = (5.0, 9.0)
"""When the picture flashes white and the tone sounds, for 0.2 s each."""
LENGTH = 12.0
RATE = 48000
FPS = 25
VIDEO_STARTS = (4.0, 4.5, 4.99, 5.0, 7.5, 7.99)
"""Copied from the keyframe at 4 s (within 1 s), then re-encoded (the keyframe at 6 s
lies more than 1 s back)."""
AUDIO_STARTS = (4.5, 4.99, 5.0, 5.01)
AUDIO_FORMATS = ("mp3", "m4a", "ogg", "wav")
_LOUD = 0.1  # a sample louder than this is the tone (it is 0.5; silence is 0)


def sounding(t: np.ndarray) -> np.ndarray:
    """The fixtures' sound at times ``t``: the tone during each event, else silence."""
    on = np.zeros_like(t, dtype=bool)
    for event in EVENTS:
        on |= (t >= event) & (t < event + 0.2)
    return np.where(on, 0.5 * np.sin(2 * np.pi * 1000 * t), 0.0).astype(np.float32)


def make_fixtures(folder: Path) -> dict[str, Path]:
    """The video and the audio files, written into ``folder``."""
    made = {"mp4": folder / "events.mp4"}
    _write(made["mp4"], video=True, codec="aac")
    codecs = {"mp3": "libmp3lame", "m4a": "aac", "ogg": "libopus", "wav": "pcm_s16le"}
    for suffix in AUDIO_FORMATS:
        made[suffix] = folder / f"events.{suffix}"
        _write(made[suffix], video=False, codec=codecs[suffix])
    return made


def _write(path: Path, *, video: bool, codec: str) -> None:
    with av.open(str(path), "w") as out:
        picture = None
        if video:
            picture = out.add_stream("libx264", rate=FPS)
            picture.width, picture.height, picture.pix_fmt = 160, 120, "yuv420p"
            picture.options = {"g": str(2 * FPS), "keyint_min": str(2 * FPS), "sc_threshold": "0"}
        sound = out.add_stream(codec, rate=RATE, layout="mono")
        block = 960  # 20 ms: Opus takes frames of this size
        samples = int(LENGTH * RATE)
        frames = int(LENGTH * FPS)
        next_picture = 0
        for first in range(0, samples, block):
            t = (first + np.arange(block)) / RATE
            data = sounding(t)
            frame = av.AudioFrame.from_ndarray(data.reshape(1, -1), format="fltp", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = RATE, first, Fraction(1, RATE)
            out.mux(sound.encode(frame))
            while picture is not None and next_picture < frames and next_picture / FPS <= t[-1]:
                white = any(e <= next_picture / FPS < e + 0.2 for e in EVENTS)
                image = np.full((120, 160, 3), 255 if white else 0, dtype=np.uint8)
                shown = av.VideoFrame.from_ndarray(image, format="rgb24")
                shown.pts, shown.time_base = next_picture, Fraction(1, FPS)
                out.mux(picture.encode(shown))
                next_picture += 1
        for stream in (picture, sound):
            if stream is not None:
                out.mux(stream.encode())


def events_in(path: Path, after: float = 0.0) -> tuple[float | None, float | None]:
    """The first loud sample and the first white picture at or after ``after`` s on
    ``path``'s own timeline (0 = where a player starts: the container's start time)."""
    sound = picture = None
    with av.open(str(path)) as container:
        origin = float(container.start_time) / av.time_base if container.start_time else 0.0
        for frame in container.decode(*container.streams):
            if frame.time is None:
                continue
            at = float(frame.time) - origin
            if isinstance(frame, av.AudioFrame) and sound is None:
                data = np.abs(frame.to_ndarray().astype(np.float64))
                if frame.format.name.startswith("s16"):
                    data /= 32768
                loud = np.nonzero(data.max(axis=0) > _LOUD)[0] / frame.sample_rate + at
                loud = loud[loud >= after - 1e-9]
                if loud.size:
                    sound = float(loud[0])
            elif (
                isinstance(frame, av.VideoFrame)
                and picture is None
                and at >= after - 1e-3
                and frame.to_ndarray(format="gray").mean() > 128
            ):
                picture = at
            done_video = picture is not None or not container.streams.video
            if sound is not None and done_video:
                break
    return sound, picture


def lateness(recording: Path, clip: Path, start: float, reported: float) -> dict[str, float | None]:
    """How late ``clip`` (cut at ``start``; the export reports ``reported``) runs, in ms,
    for sound and picture: an event's time in the clip less its time in ``recording``
    less ``reported``. None: that kind of event is not in the clip."""
    sound, picture = events_in(recording, after=start)
    got_sound, got_picture = events_in(clip)

    def late(truth: float | None, got: float | None) -> float | None:
        if truth is None or got is None:
            return None
        return round((got - (truth - reported)) * 1000, 1)

    return {"sound_late_ms": late(sound, got_sound), "picture_late_ms": late(picture, got_picture)}


def measure(folder: Path) -> list[dict]:
    """Cut every fixture in ``folder`` at every start with the code on ``sys.path``."""
    from llama_index_video.media.export import export_span

    rows = []
    fixtures = {suffix: folder / f"events.{suffix}" for suffix in ("mp4", *AUDIO_FORMATS)}
    for suffix, recording in fixtures.items():
        starts = VIDEO_STARTS if suffix == "mp4" else AUDIO_STARTS
        for start in starts:
            out = folder / f"cut_{start}.{suffix}"
            out.unlink(missing_ok=True)
            report = export_span(recording, start, start + 2.0, out)
            rows.append(
                {
                    "format": suffix,
                    "start": start,
                    "method": report.method,
                    "head_ms": round((report.start - start) * 1000, 1),
                    **lateness(recording, out, start, report.start),
                }
            )
    return rows


def _run(version: Version, folder: Path) -> list[dict]:
    return measured_in(
        version,
        "import json; from pathlib import Path; from benchmarks.clip_starts import measure;"
        f"print(json.dumps(measure(Path({str(folder)!r}))))",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", help="also cut with the code of this git ref")
    args = parser.parse_args(argv)
    versions = [today(), *([release(args.baseline_ref)] if args.baseline_ref else [])]
    print(f"load average {load_average()}; synthetic fixtures (PyAV), events at {EVENTS} s")
    with tempfile.TemporaryDirectory() as tmp:
        make_fixtures(Path(tmp))
        results = {version.name: _run(version, Path(tmp)) for version in versions}
    print(
        f"{'format':6} {'start':>5}  "
        + "  ".join(f"{v.name:>8}: method head_ms sound_late picture_late" for v in versions)
    )
    for i, row in enumerate(results["today"]):
        cells = []
        for version in versions:
            r = results[version.name][i]
            cells.append(
                f"{r['method']:>16} {r['head_ms']:7} {r['sound_late_ms']!s:>10} "
                f"{r['picture_late_ms']!s:>12}"
            )
        print(f"{row['format']:6} {row['start']:5}  " + "  ".join(cells))
    for version in versions:
        worst = max(abs(r["sound_late_ms"] or 0) for r in results[version.name])
        print(f"{version.name}: worst sound lateness {worst} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
