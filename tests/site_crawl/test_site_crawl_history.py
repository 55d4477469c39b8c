"""A crawled page's history is a sensor's: changes, entity events, observations, deliveries."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import update

from catlas_assets.services import lake_checks
from catlas_assets.services.crawl_configs import add_config, config_webpages
from catlas_assets.services.entities import derive_entities
from catlas_assets.services.notify import deliver_pending
from catlas_assets.services.site_crawl import (
    CrawlRequest,
    SiteCrawlResult,
    prepare,
    run_site_crawl,
)
from catlas_assets.services.sql import query
from resources.state import inbox
from resources.state.schema import webpages
from tests.conftest import Sim
from tests.site_crawl.conftest import INKWELL, QUILL, Crawl, next_day
from tests.webhook_receiver import Receiver

NEWS = f"{INKWELL}/news"


def _page_id(sim: Sim, config: str, url: str) -> int:
    return next(int(p["id"]) for p in config_webpages(sim.runtime, config) if p["url"] == url)


def test_a_page_that_changes_between_runs_writes_a_change_and_entity_events(
    crawl_sim: Sim, crawl: Crawl
) -> None:
    first = crawl("single_page", url=NEWS)
    next_day(crawl_sim)  # the news listing gains item 6 on day 1
    second = crawl("single_page", url=NEWS)
    assert (first.events["new"], second.events["changed"]) == (1, 1)
    page = _page_id(crawl_sim, "inkwell", NEWS)
    runtime = crawl_sim.runtime
    added = query(
        runtime,
        "SELECT run_id, entity_label FROM entity_events "
        f"WHERE webpage_id = {page} AND sensor_id IS NULL AND event = 'added' ORDER BY 1, 2",
    ).rows
    assert [label for run, label in added if run == first.report.run_id] == [
        f"News item {n}" for n in range(1, 6)
    ]  # the first snapshot lists items 1-5, the change adds item 6
    assert [label for run, label in added if run == second.report.run_id] == ["News item 6"]
    [change] = query(
        runtime,
        "SELECT webpage_id, sensor_id, lineage_id, kind, status, snapshot_id, "
        f"previous_snapshot_id FROM changes WHERE run_id = '{second.report.run_id}'",
    ).rows
    assert change[:3] == (page, None, None)
    assert change[3] in ("meaningful", "major", "critical") and change[4] == "pending"
    snapshots = dict(
        query(runtime, f"SELECT snapshot_id, run_id FROM snapshots WHERE webpage_id = {page}").rows
    )
    assert snapshots[change[5]] == second.report.run_id
    assert snapshots[change[6]] == first.report.run_id
    # The SCD2 `entities` follow sensors' surfaces: a page's items stay in entity_events.
    derived = derive_entities(runtime)
    assert (derived.events, derived.rows) == (0, 0)
    # The change waits in the inbox for the page, like a sensor's.
    [pending] = inbox.list_changes(runtime.store, status="pending")
    assert (pending["webpage_id"], pending["sensor_id"]) == (page, None)
    assert pending["kind"] == change[3]


def test_processing_modes_leave_no_snapshot_without_its_observation(
    make_runtime, web, database_url: str
) -> None:
    # Noise snapshots kept: re-processing unchanged bytes writes snapshots to check.
    runtime = make_runtime(database_url, keep_noise_snapshots=True)
    add_config(runtime, "quill", company="Quill Press", base_url=f"{QUILL}/")

    def crawl(mode: str) -> SiteCrawlResult:
        return run_site_crawl(runtime, prepare(runtime, CrawlRequest("quill", mode)))

    crawl("changed_new")
    reindex = crawl("reindex_existing")
    sim = Sim(runtime, web)
    page = _page_id(sim, "quill", f"{QUILL}/posts/q1")
    # A file whose first processing failed: stored bytes, nothing derived yet.
    with runtime.store.transaction() as conn:
        conn.execute(
            update(webpages).where(webpages.c.id == page).values(
                processing_status="failed", normalized_hash=None, structured_hash=None,
                snapshot_version=0, last_snapshot_id=None, blocks_key=None, text_key=None,
                extraction_key=None,
            )
        )  # fmt: skip
    reprocess = crawl("reprocess_failed")
    for run in (reindex.report.run_id, reprocess.report.run_id):
        [(snaps, with_obs)] = query(
            runtime,
            "SELECT count(*), count(o.observation_id) FROM snapshots s LEFT JOIN observations o "
            f"ON o.observation_id = s.observation_id WHERE s.run_id = '{run}'",
        ).rows
        assert snaps > 0 and with_obs == snaps
    # The Dagster asset checks' own probes, on every hour that holds snapshots.
    partitions = runtime.lake.partitions("snapshots")
    assert partitions
    for partition in partitions:
        finding = lake_checks.orphans(runtime, "snapshots", partition, "observations",
                                      "observation_id")  # fmt: skip
        assert finding.passed, finding.metadata
        assert lake_checks.counts_match_runs(runtime, partition).passed


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver(refuse_first=False) as r:
        yield r


def test_a_site_crawl_posts_its_verdict_and_its_changes_are_delivered(
    make_runtime, web, database_url: str, receiver: Receiver
) -> None:
    runtime = make_runtime(database_url, notify_webhook_url=receiver.url)
    sim = Sim(runtime, web)
    add_config(runtime, "inkwell", company="Inkwell Press", base_url=f"{INKWELL}/blog")
    first = run_site_crawl(runtime, prepare(runtime, CrawlRequest("inkwell", "single_page",
                                                                  url=NEWS)))  # fmt: skip
    next_day(sim)
    second = run_site_crawl(runtime, prepare(runtime, CrawlRequest("inkwell", "single_page",
                                                                   url=NEWS)))  # fmt: skip
    posts = dict(receiver.received)
    runs = [first.report.run_id, second.report.run_id]
    assert set(posts) == {*runs, *(f"{run}:start" for run in runs)}
    assert [key for key, _ in receiver.received] == [
        f"{runs[0]}:start",
        runs[0],
        f"{runs[1]}:start",
        runs[1],
    ]  # each run says it started before it says how it ended
    assert posts[f"{runs[1]}:start"]["text"].startswith("[started] site crawl inkwell")
    text = posts[second.report.run_id]["text"]
    assert "site crawl inkwell (single_page)" in text and second.report.summary_line in text
    result = deliver_pending(runtime)
    assert (result.delivered, result.failed, result.waiting) == (1, 0, 0)
    change_id, message = receiver.received[-1]
    assert change_id == inbox.list_changes(runtime.store)[0]["change_id"]
    assert NEWS in message["text"] and "(diff: file://" in message["text"]
    [row] = inbox.list_changes(runtime.store)
    assert row["status"] == "delivered" and row["webpage_id"] is not None
