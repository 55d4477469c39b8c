"""The site-crawl tables' rules are the database's own: violations are refused by it."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from state_rows import NOW, SensorFactory

from resources.state import site_crawl_store as pages
from resources.state.schema import change_inbox, crawl_configs, crawl_runs, run_events, webpages
from resources.state.store import StateStore


@pytest.fixture
def config_id(store: StateStore, company_id: int) -> int:
    return pages.add_config(
        store, name="blog", company_id=company_id, base_url="https://acme.com/blog",
        allowed_domains=["acme\\.com$"], surface="blog", created_at=NOW, updated_at=NOW,
    )  # fmt: skip


def _page(store: StateStore, url: str = "https://acme.com/a") -> int:
    pages.insert_urls(store, [url], NOW)
    row = pages.page_by_url(store, url)
    assert row is not None
    return int(row["id"])


def _refused(store: StateStore, statement: Any) -> bool:
    try:
        with store.transaction() as conn:
            conn.execute(statement)
    except IntegrityError:
        return True
    return False


def _run(config_id: int, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "run_1", "kind": "site_crawl", "started_at": NOW, "counters": {},
        "launcher": "local", "mode": "resume", "config_id": config_id, "status": "RUNNING",
        "claimed": 0, "ok": 0, "changed": 0, "meaningful": 0, "failed": 0, "not_modified": 0,
        "unchanged": 0, "skipped": 0, "redirected": 0, "requests": 0, "coverage_gaps": 0,
        "productive": False, "empty_streak": 0,
    }  # fmt: skip
    row.update(values)
    return row


def test_crawl_status_outside_the_enumeration_is_refused(store: StateStore) -> None:
    page_id = _page(store)
    for value in ("DONE", "crawled", ""):
        stmt = update(webpages).where(webpages.c.id == page_id).values(crawl_status=value)
        assert _refused(store, stmt), value
    ok = update(webpages).where(webpages.c.id == page_id).values(crawl_status="CRAWL_FAILED")
    assert not _refused(store, ok)


@pytest.mark.parametrize("target", ["", "   "])
def test_a_blank_redirect_target_is_refused(store: StateStore, target: str) -> None:
    page_id = _page(store)
    stmt = update(webpages).where(webpages.c.id == page_id).values(redirects_to=target)
    assert _refused(store, stmt)


def test_processing_status_is_an_enumeration(store: StateStore) -> None:
    page_id = _page(store)
    stmt = update(webpages).where(webpages.c.id == page_id).values(processing_status="done")
    assert _refused(store, stmt)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://acme.com/a?b=1#c", "acme.com"),
        ("http://user:pw@docs.acme.com:8080/x", "user:pw@docs.acme.com:8080"),
        ("https://ACME.com", "ACME.com"),
        ("/relative/path", None),
        ("mailto:someone@acme.com", None),
        ("http:///no-authority", None),
    ],
)
def test_host_is_a_generated_column_of_the_authority(
    store: StateStore, url: str, host: str | None
) -> None:
    page_id = _page(store, url)
    with store.engine.connect() as conn:
        got = conn.execute(select(webpages.c.host).where(webpages.c.id == page_id)).scalar_one()
    assert got == host


def test_insertion_never_requeues(store: StateStore) -> None:
    page_id = _page(store)
    with store.transaction() as conn:
        conn.execute(
            update(webpages).where(webpages.c.id == page_id).values(crawl_status="CRAWLED")
        )
    pages.insert_urls(store, ["https://acme.com/a", "https://acme.com/b"], NOW)
    assert pages.page(store, page_id)["crawl_status"] == "CRAWLED"
    added = pages.page_by_url(store, "https://acme.com/b")
    assert added is not None and added["crawl_status"] == "PENDING"


def test_site_crawl_runs_need_mode_config_and_status(store: StateStore, config_id: int) -> None:
    assert _refused(store, insert(crawl_runs).values(**_run(config_id, mode=None)))
    assert _refused(store, insert(crawl_runs).values(**_run(config_id, mode="everything")))
    assert _refused(store, insert(crawl_runs).values(**_run(config_id, status=None)))
    assert _refused(store, insert(crawl_runs).values(**_run(config_id, status="DONE")))
    assert _refused(store, insert(crawl_runs).values(**_run(config_id, launcher="ecs")))
    assert not _refused(store, insert(crawl_runs).values(**_run(config_id)))


def test_final_runs_need_completed_at_and_failed_ones_an_error(
    store: StateStore, config_id: int
) -> None:
    assert _refused(store, insert(crawl_runs).values(**_run(config_id, status="COMPLETED")))
    assert _refused(
        store, insert(crawl_runs).values(**_run(config_id, status="FAILED", completed_at=NOW))
    )
    assert _refused(
        store,
        insert(crawl_runs).values(
            **_run(config_id, status="FAILED", completed_at=NOW, error_message="  ")
        ),
    )
    assert not _refused(
        store,
        insert(crawl_runs).values(
            **_run(config_id, status="FAILED", completed_at=NOW, error_message="boom")
        ),
    )


def test_run_event_and_transition_are_enumerations(store: StateStore, config_id: int) -> None:
    page_id = _page(store)
    assert not _refused(store, insert(crawl_runs).values(**_run(config_id)))
    event = {"run_id": "run_1", "webpage_id": page_id, "url": "https://acme.com/a", "at": NOW}
    assert _refused(store, insert(run_events).values(**event, event="fetched"))
    assert _refused(store, insert(run_events).values(**event, event="failed", transition="worse"))
    assert not _refused(
        store, insert(run_events).values(**event, event="failed", transition="regression")
    )


def test_config_names_are_unique(store: StateStore, config_id: int, company_id: int) -> None:
    again = insert(crawl_configs).values(
        name="blog", company_id=company_id, base_url="https://x.com", allowed_domains=[],
        surface="blog", created_at=NOW, updated_at=NOW,
    )  # fmt: skip
    assert _refused(store, again)


def test_an_inbox_change_names_a_sensor_or_a_webpage_never_both_nor_neither(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    sensor, page = add_sensor(), _page(store)

    def change(change_id: str, **source: int) -> Any:
        return insert(change_inbox).values(
            change_id=change_id, company_id=company_id, surface="blog", kind="major",
            significance=0.8, summary="s", detected_at=NOW, status="pending", **source,
        )  # fmt: skip

    assert _refused(store, change("neither"))
    assert _refused(store, change("both", sensor_id=sensor, webpage_id=page))
    assert not _refused(store, change("page", webpage_id=page))
    assert not _refused(store, change("sensor", sensor_id=sensor))
