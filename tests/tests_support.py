"""Paths of the example media, importable from any test module."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "media"
OZONE = EXAMPLES / "ozone_explainer.mp4"
CHECKOUT = EXAMPLES / "checkout_deep_dive.mp4"
TEAM_SYNC = EXAMPLES / "team_sync.mp3"
HANDBOOK = EXAMPLES / "handbook.md"
SUBTITLES = ROOT / "tests" / "fixtures" / "subtitles"
