"""Names for voices: the facade's side that names a recording's speakers and, through the
folder's voice library, the same voices in other recordings (issue 37).

:meth:`Naming.name_speaker` writes a name into every unit a label said
(:mod:`llama_index_video.store.speaker_names`) and keeps the label's voice in the
library; :meth:`Naming.relabel_speakers` names the matching voices of recordings
ingested before (:mod:`llama_index_video.store.voice_library`), as every ingest does for
the recordings it adds. Each takes the writer lock, and counts the summaries ``list``
shows of the recordings it looked at again (:func:`~llama_index_video.store.library.summarize`).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from llama_index_video.recordings import Recordings
from llama_index_video.store.lock import DEFAULT_WAIT_SECONDS

if TYPE_CHECKING:
    from llama_index_video.store.lexical import LexicalStore
    from llama_index_video.store.voice_library import HeardRecording, Relabelled


class Naming(Recordings):
    """``name_speaker`` and ``relabel_speakers`` of an index folder."""

    lexical: LexicalStore

    def _writing(self, wait: float) -> AbstractContextManager[None]:
        """Hold the folder's writer lock (``VideoIndex`` takes it)."""
        raise NotImplementedError

    def name_speaker(
        self, source: str | Path, speaker: str, name: str, *, wait: float = DEFAULT_WAIT_SECONDS
    ) -> int:
        """Call ``speaker`` (``SPEAKER_2``, or a name given before) of an indexed recording
        ``name`` in every unit it said; returns how many units carry the name. Takes the
        writer lock (see :mod:`llama_index_video.store.speaker_names`).

        Raises:
            ValueError: ``name`` is empty, too long or holds a comma.
            MomentRequestError: an unknown recording, or no unit of it was said by ``speaker``.
        """
        from llama_index_video.store.library import summarize
        from llama_index_video.store.speaker_names import check_speaker_name, rename_speaker
        from llama_index_video.store.voice_library import VoiceLibrary, heard_voice

        name = check_speaker_name(name)
        with self._writing(wait):
            recording = self.recording(source)
            key = recording.content_hash
            heard = self._heard(key, recording.path, recording.name)
            voice = heard_voice(self.vector_store, heard, speaker, name)
            named = rename_speaker(
                self.vector_store, self.lexical, key, speaker, name, shown=recording.name
            )
            self.lexical.refresh()
            summarize(self.manifest, self.vector_store, key)
            library = VoiceLibrary(self.path)
            library.rename(speaker, name)
            if voice is not None:
                library.hear(name, key, voice)
            library.save()
            return named

    def relabel_speakers(
        self, sources: Iterable[str | Path] = (), *, wait: float = DEFAULT_WAIT_SECONDS
    ) -> Relabelled:
        """Name the labels of ``sources`` (default: every recording) whose voice matches
        one named before, in the folder's voice library (see
        :mod:`llama_index_video.store.voice_library`). Takes the writer lock.

        Raises:
            MomentRequestError: an unknown recording.
        """
        with self._writing(wait):
            records = [self.recording(s) for s in sources] or [
                self.recording(p.source) for p in self.manifest.all_paths()
            ]
            return self._name_voices((r.content_hash, Path(r.path), r.name) for r in records)

    def _name_voices(self, recordings: Iterable[tuple[str, Path, str]]) -> Relabelled:
        """Name the voices of ``recordings`` (content hash, audio file, name shown)."""
        from llama_index_video.store.library import summarize
        from llama_index_video.store.voice_library import VoiceLibrary, relabel

        heard = [self._heard(key, audio, shown) for key, audio, shown in recordings]
        done = relabel(VoiceLibrary(self.path), self.vector_store, self.lexical, heard)
        if any(done.named.values()):  # ingest calls this for each file: rebuild only for names
            self.lexical.refresh()
        for recording in heard:
            summarize(self.manifest, self.vector_store, recording.content_hash)
        return done

    def _heard(self, content_hash: str, audio: str | Path, shown: str) -> HeardRecording:
        """Where the voices of ``content_hash`` are heard: the track and duration its ingest
        stored (:func:`~llama_index_video.reader.speech.heard_track`)."""
        from llama_index_video.reader.channels import heard_by_channel
        from llama_index_video.reader.speech import heard_track
        from llama_index_video.store.voice_library import HeardRecording

        record = self.manifest.file(content_hash)
        return HeardRecording(
            content_hash,
            Path(audio),
            shown,
            track=heard_track(record.notes) if record is not None else 1,
            duration=record.duration if record is not None else None,
            by_channel=record is not None and heard_by_channel(record.notes),
        )
