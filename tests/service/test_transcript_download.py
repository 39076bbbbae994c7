"""GET /api/transcript?format=: the page's transcript downloads."""

from __future__ import annotations

from tests.store.test_transcript_export import parsed
from tests_support import TEAM_SYNC


def test_the_service_sends_each_format_as_a_download(client):
    for fmt, media_type in (("srt", "application/x-subrip"), ("vtt", "text/vtt")):
        response = client.get("/api/transcript", params={"source": str(TEAM_SYNC), "format": fmt})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith(media_type)
        assert f'filename="team_sync.{fmt}"' in response.headers["content-disposition"]
        assert parsed(fmt, response.text)
    plain = client.get("/api/transcript", params={"source": str(TEAM_SYNC)}).json()
    assert plain[0]["language"] == "en"
    bad = client.get("/api/transcript", params={"source": str(TEAM_SYNC), "format": "doc"})
    assert bad.status_code == 422
