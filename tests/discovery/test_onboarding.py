"""Onboarding on both state backends: the discover queue, re-discovery, lake rows, and two
workers on PostgreSQL that never discover the same company at the same time."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from catlas_assets.services import catalog, discovery, onboarding
from catlas_assets.services.onboarding import onboard_company, onboard_pending
from fixture_web import FixtureWeb
from resources.state import onboarding_store as queue


def test_adding_a_company_queues_one_discover_job_and_onboarding_seeds_sensors(sim) -> None:
    runtime = sim.runtime
    company = catalog.add_company(runtime, name="Harborlight", website="http://harborlight.com")
    catalog.add_company(runtime, name="Quiet Harbor Co", website=None)
    assert runtime.store.company(company)["onboarding_status"] == "pending"
    [job] = queue.list_jobs(runtime.store, company_id=company)
    assert (job["status"], job["attempts"]) == ("pending", 0)
    # Queuing again is idempotent: one open job per company.
    assert onboarding.enqueue(runtime, company) == job["id"]

    batch = onboard_pending(runtime)
    assert batch.report.outcome.value == "success"
    assert {c.name: c.status for c in batch.companies} == {
        "Harborlight": "active",
        "Quiet Harbor Co": "no_website",
    }
    row = runtime.store.company(company)
    assert row["onboarding_status"] == "active"
    assert row["stats"]["discovery"]["requests"] <= 25
    sensors = {s["surface"]: s for s in runtime.store.list_sensors(company_id=company)}
    assert set(sensors) == {"homepage", "careers", "blog", "jobs_board"}
    board = sensors["jobs_board"]
    assert (board["connector"], board["discovery_method"], board["status"]) == (
        "greenhouse",
        "ats",
        "pending",
    )
    assert board["discovery_confidence"] == 1.0 and board["next_run_at"] >= runtime.clock.now()
    assert queue.list_jobs(runtime.store, company_id=company)[0]["status"] == "done"

    rows = (
        runtime.lake.connect()
        .sql(
            "SELECT surface, selected, reason FROM discovery WHERE company_id = ? ",
            params=[company],
        )
        .fetchall()
    )
    assert len(rows) > len(sensors) and sum(1 for r in rows if r[1]) == len(sensors)
    assert all(reason for _, _, reason in rows)  # every candidate says why


def test_rediscovery_updates_sensors_without_duplicating_or_deleting(sim) -> None:
    runtime = sim.runtime
    company = catalog.add_company(runtime, name="Lanternfish", website="http://lanternfish.ai")
    first = onboard_company(runtime, "Lanternfish", fetch_now=True)
    created = sorted(first.companies[0].created)
    assert len(created) == 5
    assert all(s["next_run_at"] == runtime.clock.now() for s in runtime.store.list_sensors())
    sim.advance(timedelta(days=1))
    again = onboard_company(runtime, "Lanternfish")
    assert again.companies[0].created == [] and sorted(again.companies[0].updated) == created
    assert sorted(s["id"] for s in runtime.store.list_sensors(company_id=company)) == created
    assert runtime.store.company(company)["source_meta"]["same_as"][0].endswith("lanternfish-ai")


def test_off_domain_redirect_records_domain_rows_and_moves_the_canonical_domain(sim) -> None:
    runtime = sim.runtime
    company = catalog.add_company(runtime, name="Novapeak", website="http://oldname-systems.com")
    onboard_pending(runtime)
    with runtime.store.engine.connect() as conn:
        from sqlalchemy import select

        from resources.state.schema import domains

        rows = set(conn.execute(select(domains.c.domain, domains.c.kind)).all())
    assert rows == {("oldname-systems.com", "redirect"), ("novapeak.io", "canonical")}
    assert runtime.store.company(company)["domain"] == "novapeak.io"


def test_failed_discovery_backs_off_30_min_per_attempt_then_dies(sim, web: FixtureWeb) -> None:
    runtime = sim.runtime
    # The name resolves but its robots.txt answers 500 (RFC 9309: nothing may be fetched).
    company = catalog.add_company(runtime, name="Walled", website="http://robots-500.faultline.dev")
    for attempt in (1, 2):
        batch = onboard_pending(runtime)
        assert batch.companies[0].status == "failed"
        [job] = queue.list_jobs(runtime.store, company_id=company)
        assert job["status"] == "pending" and job["attempts"] == attempt
        assert job["run_after"] == runtime.clock.now() + timedelta(minutes=30 * attempt)
        # Failed while it waits for the retry, with the reason.
        row = runtime.store.company(company)
        assert row["onboarding_status"] == "failed" and row["onboarding_error"]
        assert onboard_pending(runtime).companies == []  # not due yet
        sim.advance(timedelta(minutes=30 * attempt))
    onboard_pending(runtime)
    [job] = queue.list_jobs(runtime.store, company_id=company)
    assert (job["status"], job["attempts"]) == ("dead", 3)
    row = runtime.store.company(company)
    assert (
        row["onboarding_status"] == "failed" and "homepage unreachable" in row["onboarding_error"]
    )


def test_no_website_when_no_variant_resolves_and_not_retried_until_the_website_changes(
    sim, web: FixtureWeb
) -> None:
    runtime = sim.runtime
    company = catalog.add_company(runtime, name="Gone", website="unknown-host.example")
    batch = onboard_pending(runtime)
    assert [c.status for c in batch.companies] == ["no_website"]
    assert batch.companies[0].result.requests == 0  # DNS answered: no request was made
    row = runtime.store.company(company)
    assert row["onboarding_status"] == "no_website"
    assert "no variant of the website resolves" in row["onboarding_error"]
    [job] = queue.list_jobs(runtime.store, company_id=company)
    assert job["status"] == "done"
    sim.advance(timedelta(days=3))
    assert onboard_pending(runtime).companies == []  # never retried on its own

    assert not catalog.change_website(runtime, company, "https://Unknown-Host.example/")
    assert catalog.change_website(runtime, company, "saltmarsh.io")
    again = onboard_pending(runtime)
    assert [c.status for c in again.companies] == ["active"]
    row = runtime.store.company(company)
    assert (row["domain"], row["onboarding_error"]) == ("saltmarsh.io", None)


def test_two_workers_on_postgresql_never_discover_the_same_company_at_once(
    make_runtime, web: FixtureWeb, postgres_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import reset_postgres

    reset_postgres(postgres_database)
    setup = make_runtime(postgres_database)
    sites = [
        "http://harborlight.com",
        "http://cobaltmills.com",
        "http://saltmarsh.io",
        "http://fernhill.co",
        "http://mossgrove.com",
        "http://lanternfish.ai",
    ]
    for number, site in enumerate(sites):
        catalog.add_company(setup, name=f"Company {number}", website=site)

    active: dict[str, str] = {}
    overlaps: list[str] = []
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()
    real = discovery.discover_async

    async def watched(runtime, website, fetcher):
        with lock:
            if website in active:
                overlaps.append(website)
            active[website] = runtime.worker
            seen.append((website, runtime.worker))
        try:
            time.sleep(0.05)  # widen the window in which a double claim would show
            return await real(runtime, website, fetcher)
        finally:
            with lock:
                active.pop(website, None)

    monkeypatch.setattr(onboarding, "discover_async", watched)

    def worker(name: str) -> None:
        runtime = make_runtime(postgres_database)
        runtime.worker = name
        while onboard_pending(runtime, limit=1).companies:
            pass

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert overlaps == []
    assert sorted(site for site, _ in seen) == sorted(sites)  # each discovered exactly once
    jobs = queue.list_jobs(setup.store)
    assert {(j["status"], j["attempts"]) for j in jobs} == {("done", 1)}
