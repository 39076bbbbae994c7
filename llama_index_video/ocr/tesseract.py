"""Tesseract: the alternative OCR backend, run as the ``tesseract`` program.

Tesseract keeps the spaces between words and is quick on clean slides (~0.25 s per
640x360 frame on 2 cores), but does not read rotated text. It runs as a subprocess
with an argument list (never a shell string) and its TSV output, so no Python
wrapper is needed: the program comes from the system (Debian: ``tesseract-ocr``).
``OMP_THREAD_LIMIT`` caps its threads.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from pathlib import Path

from llama_index_video.errors import MediaError, MissingDependencyError
from llama_index_video.ocr.base import TextBox

_WORD_LEVEL = "5"
_STDERR_TAIL = 400
_LIST_TIMEOUT_S = 30.0
_INSTALL = (
    "install the tesseract-ocr system package (Debian/Ubuntu: apt-get install tesseract-ocr), "
    "or use the default RapidOCR engine: pip install 'llama-index-video[ocr]'"
)


class TesseractEngine:
    """OCR with the ``tesseract`` program.

    Args:
        languages: Tesseract language codes joined with ``+``, e.g. ``"eng+deu"``
            (each needs its language data installed).
        page_segmentation: Tesseract's ``--psm`` mode; 11 (sparse text) suits slides
            and screens with scattered labels.
        threads: Threads tesseract may use (``OMP_THREAD_LIMIT``); ``None``: its default
            (all cores). One is the default: on slide-sized frames more threads add CPU
            time, not speed (20 720p slides: 5.4 s wall with 1 or 2 threads).
        timeout: Seconds before one image's run is abandoned.
        executable: Path of the program; default: ``tesseract`` on ``PATH``.

    Raises:
        MissingDependencyError: the program, or the data of one of ``languages``, is not
            installed.
    """

    name = "tesseract"

    def __init__(
        self,
        *,
        languages: str = "eng",
        page_segmentation: int = 11,
        threads: int | None = 1,
        timeout: float = 60.0,
        executable: str | None = None,
    ) -> None:
        if not 0 <= page_segmentation <= 13:
            raise ValueError(f"page_segmentation must be in 0..13, got {page_segmentation}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        found = shutil.which(executable or "tesseract")
        if found is None:
            raise MissingDependencyError(
                "tesseract-ocr", "ocr", "OCR with tesseract", install=_INSTALL
            )
        self.executable = found
        _check_languages(found, languages)
        self.languages = languages
        self.page_segmentation = page_segmentation
        self.threads = threads
        self.timeout = timeout

    def detect(self, image: Path) -> list[TextBox]:
        """Every word tesseract finds in ``image``.

        Raises:
            MediaError: tesseract failed on the image or timed out.
        """
        args = [self.executable, str(image), "stdout", "-l", self.languages]
        args += ["--psm", str(self.page_segmentation), "tsv"]
        env = dict(os.environ)
        if self.threads:
            env["OMP_THREAD_LIMIT"] = str(self.threads)
        try:
            completed = subprocess.run(
                args,
                capture_output=True,
                timeout=self.timeout,
                check=False,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        except subprocess.TimeoutExpired as exc:
            reason = f"tesseract did not finish within {self.timeout:.0f} s"
            raise MediaError(image, reason) from exc
        if completed.returncode != 0:
            tail = completed.stderr.decode("utf-8", "replace").strip()[-_STDERR_TAIL:]
            raise MediaError(image, f"tesseract failed (exit {completed.returncode}): {tail}")
        return parse_tsv(completed.stdout.decode("utf-8", "replace"))


def installed_languages(executable: str) -> frozenset[str] | None:
    """The language data ``tesseract --list-langs`` finds; None when it cannot tell."""
    try:
        listed = subprocess.run(
            [executable, "--list-langs"],
            capture_output=True,
            timeout=_LIST_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode != 0:
        return None
    lines = listed.stdout.decode("utf-8", "replace").splitlines()
    return frozenset(line.strip() for line in lines[1:] if line.strip())  # after the heading


def _check_languages(executable: str, languages: str) -> None:
    """Fail, naming the Debian package, when a language's data is not installed (rather
    than failing every frame); a tesseract that cannot list its data is not checked."""
    installed = installed_languages(executable)
    if installed is None:
        return
    for code in languages.split("+"):
        if code not in installed:
            package = f"tesseract-ocr-{code.lower().replace('_', '-')}"
            raise MissingDependencyError(
                package,
                "ocr",
                f"Reading on-screen text in {code!r} with tesseract",
                install=f"install its language data (Debian/Ubuntu: apt-get install {package}; "
                f"tesseract has {', '.join(sorted(installed)) or 'none'})",
            )


def parse_tsv(tsv: str) -> list[TextBox]:
    """The words of tesseract's TSV output (level 5 rows with text), confidence 0-1."""
    reader = csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE)
    boxes = []
    for row in reader:
        text = (row.get("text") or "").strip()
        if row.get("level") != _WORD_LEVEL or not text or float(row["conf"]) < 0:
            continue
        boxes.append(
            TextBox(
                text=text,
                confidence=float(row["conf"]) / 100.0,
                left=float(row["left"]),
                top=float(row["top"]),
                width=float(row["width"]),
                height=float(row["height"]),
            )
        )
    return boxes
