"""Pages crawled several at a time: politeness unchanged, results those of one at a time."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from catlas_assets.services import site_crawl
from catlas_assets.services.crawl_configs import add_config, config_webpages, run_events
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.site_crawl import CrawlRequest, SiteCrawlResult, prepare, run_site_crawl
from catlas_assets.services.sql import query
from fixture_web import DEFAULT_NOW
from tests.fixture_web_process import web_process
from tests.site_crawl.conftest import INKWELL

SPACING_S = 0.08
# The governor spaces request starts; arrival at the server adds a few ms of loop and
# socket jitter, sequential crawls included (the politeness tests allow the same 20 ms).
JITTER_S = 0.02
PAGE_COLUMNS = ("crawl_status", "redirects_to", "skip_reason", "content_hash",
                "processing_status", "snapshot_version", "last_outcome")  # fmt: skip


def _crawl(runtime: Runtime) -> SiteCrawlResult:
    add_config(runtime, "inkwell", company="Inkwell Press", base_url=f"{INKWELL}/blog")
    return run_site_crawl(runtime, prepare(runtime, CrawlRequest("inkwell", "changed_new")))


def _pages(runtime: Runtime) -> dict[str, tuple[object, ...]]:
    return {
        p["url"]: tuple(p[c] for c in PAGE_COLUMNS) for p in config_webpages(runtime, "inkwell")
    }


def _events(runtime: Runtime, run_id: str) -> Counter[tuple[str, str, str | None]]:
    return Counter((e["url"], e["event"], e["transition"]) for e in run_events(runtime, run_id))


def _entity_events(runtime: Runtime) -> Counter[tuple[str, str, str]]:
    rows = query(
        runtime,
        "SELECT w.url, e.entity_key, e.event FROM entity_events e "
        "JOIN webpages w ON w.webpage_id = e.webpage_id",
    ).rows
    return Counter((str(url), str(key), str(event)) for url, key, event in rows)


def test_a_concurrent_crawl_keeps_spacing_and_matches_a_sequential_one(
    make_runtime, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server runs in its own process: its log then times arrivals as they happen.
    with web_process(tmp_path, DEFAULT_NOW) as web:
        _concurrent_against_sequential(make_runtime, database_url, tmp_path, monkeypatch, web)


def _concurrent_against_sequential(
    make_runtime, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, web
) -> None:
    # A counting wrapper round the real page crawl: the witness that pages overlapped.
    in_flight = [0, 0]
    real = site_crawl.crawl_row

    async def counted(*args: Any, **kwargs: Any) -> Any:
        in_flight[0] += 1
        in_flight[1] = max(in_flight)
        try:
            return await real(*args, **kwargs)
        finally:
            in_flight[0] -= 1

    monkeypatch.setattr(site_crawl, "crawl_row", counted)
    sequential = make_runtime(f"sqlite:///{tmp_path / 'one.db'}", site_crawl_concurrency=1,
                              state_dir=str(tmp_path / "one"),
                              hosts=str(web.hosts_file))  # fmt: skip
    one = _crawl(sequential)
    assert in_flight[1] == 1
    web.clear_requests()
    # On each backend: pages in flight commit at once (PostgreSQL: concurrent transactions).
    concurrent = make_runtime(database_url, site_crawl_concurrency=6,
                              domain_concurrency=3, domain_spacing_s=SPACING_S,
                              state_dir=str(tmp_path / "many"),
                              hosts=str(web.hosts_file))  # fmt: skip
    many = _crawl(concurrent)
    assert in_flight[1] > 1
    # The fixture server's log is the witness: one domain, requests never closer than the
    # spacing, however many pages were in flight.
    log = web.requests()
    arrivals = sorted(r["received"] for r in log if r["host"] == "inkwell-press.com")
    assert len(arrivals) > 45
    assert min(b - a for a, b in pairwise(arrivals)) >= SPACING_S - JITTER_S
    assert {r["host"] for r in log} == {"inkwell-press.com"}
    assert _pages(concurrent) == _pages(sequential)
    assert _events(concurrent, many.report.run_id) == _events(sequential, one.report.run_id)
    assert many.events == one.events
    assert (many.report.stop, many.report.outcome) == (one.report.stop, one.report.outcome)
    assert _entity_events(concurrent) == _entity_events(sequential)
