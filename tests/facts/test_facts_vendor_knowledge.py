"""Each vendor's facts live in its connector: detection, endpoint and answer shape agree."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

from catlas_assets.domain import ats
from catlas_assets.domain.connectors import registry
from catlas_assets.domain.connectors.base import Page

NOW = datetime(2026, 1, 12, 9, 0, tzinfo=UTC)
# An empty board in each JSON vendor's envelope: the verification accepts it and the
# connector reads it as a valid empty board.
EMPTY_BOARDS = {
    "greenhouse": {"jobs": [], "meta": {"total": 0}},
    "lever": [],
    "ashby": {"apiVersion": "1", "jobs": []},
    "workable": {"name": "Acme", "jobs": []},
    "recruitee": {"offers": []},
    "smartrecruiters": {"offset": 0, "limit": 100, "totalFound": 0, "content": []},
}


def test_every_ats_connector_declares_its_board_links_and_ats_asks_exactly_those() -> None:
    ats_connectors = {name for name, c in registry.CONNECTORS.items() if c.kind == "ats"}
    assert set(ats.VENDORS) == ats_connectors
    assert len(ats_connectors) == 9


def test_a_board_answer_that_verifies_is_one_the_connector_reads() -> None:
    for vendor, board in EMPTY_BOARDS.items():
        body = json.dumps(board).encode()
        assert ats.verify_answer(vendor, 200, body), vendor
        extraction = registry.get(vendor).parse([Page("http://x/api", body)], "jobs_board", NOW)
        assert extraction.structured and extraction.entities.get("job", []) == [], vendor
        assert not ats.verify_answer(vendor, 200, b'{"unexpected": true}'), vendor


def test_the_sitemap_connector_reads_gzip_and_any_namespace_like_discovery() -> None:
    body = (
        b'<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">'
        b"<url><loc>https://example.com/b</loc></url><url><loc>https://example.com/a</loc></url>"
        b"</urlset>"
    )
    for raw in (body, gzip.compress(body)):
        page = registry.get("sitemap").parse([Page("http://x/sitemap.xml", raw)], "homepage", NOW)
        assert page.page["sitemap"] == "urlset"
        assert page.page["urls"] == ["https://example.com/a", "https://example.com/b"]
        assert page.page["url_count"] == 2
