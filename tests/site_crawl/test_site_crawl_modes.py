"""Every crawl mode's flags and effects on the fixture web, and both scopes (spec 003)."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from catlas_assets.errors import CatlasError, CrawlScopeError
from catlas_assets.services.crawl_configs import add_config, config_webpages, run_events
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.site_crawl import CrawlRequest, prepare, run_site_crawl
from resources.state import site_crawl_store as pages
from resources.state.schema import webpages
from tests.conftest import Sim
from tests.site_crawl.conftest import INKWELL, QUILL, Crawl, next_day


def _rows(sim: Sim, config: str) -> dict[str, dict]:
    return {p["url"]: p for p in config_webpages(sim.runtime, config)}


def _paths(sim: Sim) -> list[str]:
    return [r.path for r in sim.web.requests if r.path != "/robots.txt"]


def _set(sim: Sim, url_like: str, **values: object) -> None:
    with sim.runtime.store.transaction() as conn:
        conn.execute(update(webpages).where(webpages.c.url.like(url_like)).values(**values))


def test_path_scope_over_news_never_requests_newsroom(crawl_sim: Sim, crawl: Crawl) -> None:
    report = crawl("path_scope", path="/news").report
    asked = _paths(crawl_sim)
    assert "/news" in asked and "/news/item-0" in asked
    assert not [p for p in asked if p.startswith("/newsroom")]  # the server log is the witness
    assert not [p for p in asked if p.startswith("/docs") or p.startswith("/blog")]
    rows = _rows(crawl_sim, "inkwell")
    assert not [u for u in rows if "/newsroom" in u or "/docs" in u]  # links not recorded
    assert f"{INKWELL}/news?page=2" in rows
    to_docs = rows[f"{INKWELL}/news/to-docs"]
    assert to_docs["crawl_status"] == "SKIPPED" and to_docs["redirects_to"] is None
    assert report.outcome.value == "success"


def test_no_row_outside_either_scope_is_rewritten_or_fetched(crawl_sim: Sim, crawl: Crawl) -> None:
    crawl("changed_new", config="quill")
    crawl("path_scope", path="/docs")
    quill_before = _rows(crawl_sim, "quill")
    docs_before = {u: r for u, r in _rows(crawl_sim, "inkwell").items() if "/docs" in u}
    _set(crawl_sim, f"{QUILL}/%", crawl_status="CRAWL_FAILED")
    _set(crawl_sim, f"{INKWELL}/docs/api%", crawl_status="CRAWL_FAILED", failure_class="HTTP_5XX")
    crawl_sim.web.clear_requests()
    crawl("path_scope", path="/news")  # the force-fetch reset, bounded by the path
    assert {r.host for r in crawl_sim.web.requests} == {"inkwell-press.com"}
    after = _rows(crawl_sim, "inkwell")
    for url, row in docs_before.items():
        assert after[url]["last_run_id"] == row["last_run_id"]
        assert after[url]["updated_at"] <= crawl_sim.runtime.clock.now()
    assert after[f"{INKWELL}/docs/api"]["crawl_status"] == "CRAWL_FAILED"
    crawl_sim.web.clear_requests()
    crawl("retry_failed")  # the retry reset, bounded by the config
    assert "/docs/api" in _paths(crawl_sim)
    assert {r.host for r in crawl_sim.web.requests} == {"inkwell-press.com"}
    quill_after = _rows(crawl_sim, "quill")
    assert {u: r["crawl_status"] for u, r in quill_after.items()} == {
        u: "CRAWL_FAILED" for u in quill_before
    }
    assert all(quill_after[u]["last_run_id"] == r["last_run_id"] for u, r in quill_before.items())


def test_both_resets_clear_redirect_targets_and_stay_in_their_scope(crawl_sim: Sim) -> None:
    store, now = crawl_sim.runtime.store, crawl_sim.runtime.clock.now()
    urls = [f"{INKWELL}/news/a", f"{INKWELL}/newsroom/b", f"{QUILL}/c", f"{INKWELL}/news/d"]
    pages.insert_urls(store, urls, now)
    _set(crawl_sim, "%", crawl_status="CRAWLED", redirects_to="http://inkwell-press.com/x")
    _set(crawl_sim, f"{INKWELL}/news/d", crawl_status="CRAWL_FAILED")
    from catlas_assets.domain.crawl_scope import PathScope

    regex = PathScope("/news", INKWELL).pattern
    assert pages.reset(store, pages.RETRY_RESET, ["inkwell-press.com"], regex, now) == 1
    assert pages.reset(store, pages.FORCE_RESET, ["inkwell-press.com"], regex, now) == 1
    rows = {r["url"]: r for r in pages.all_pages(store)}
    assert rows[f"{INKWELL}/news/a"]["crawl_status"] == "PENDING"
    assert rows[f"{INKWELL}/news/a"]["redirects_to"] is None
    assert rows[f"{INKWELL}/news/d"]["redirects_to"] is None
    for kept in (f"{INKWELL}/newsroom/b", f"{QUILL}/c"):
        assert rows[kept]["crawl_status"] == "CRAWLED" and rows[kept]["redirects_to"]
    assert pages.reset(store, pages.FORCE_RESET, ["quillpress.com"], None, now) == 1


def test_single_page_fetches_one_url_without_following_links(crawl_sim: Sim, crawl: Crawl) -> None:
    result = crawl("single_page", url=f"{INKWELL}/blog")
    assert list(_rows(crawl_sim, "inkwell")) == [f"{INKWELL}/blog"]
    assert _paths(crawl_sim) == ["/blog"]
    assert result.events["new"] == 1
    with pytest.raises(CrawlScopeError):
        prepare(crawl_sim.runtime, CrawlRequest("inkwell", "single_page", url=f"{QUILL}/"))


def test_refused_inputs_send_nothing_and_record_no_run(crawl_sim: Sim) -> None:
    runtime = crawl_sim.runtime
    for request in (
        CrawlRequest("inkwell", "single_page", url=f"{INKWELL}/blog", path="/news"),
        CrawlRequest("inkwell", "single_page"),
        CrawlRequest("inkwell", "path_scope"),
        CrawlRequest("inkwell", "path_scope", path=""),
        CrawlRequest("inkwell", "path_scope", path="http://inkwell-press.com/news"),
        CrawlRequest("inkwell", "sideways"),
        CrawlRequest("nobody", "resume"),
    ):
        with pytest.raises(CatlasError):
            prepare(runtime, request)
    assert runtime.store.runs(kind="site_crawl") == []
    assert crawl_sim.web.requests == []
    # The run-config front drops what the mode does not require instead.
    dropped = prepare(runtime, CrawlRequest("inkwell", "resume", url="x", path="/n"), strict=False)
    assert dropped.inputs.url is None and dropped.inputs.path is None


def test_regression_then_recovery_across_three_runs(crawl_sim: Sim, crawl: Crawl) -> None:
    url = f"{INKWELL}/blog/flaky"
    first = crawl("single_page", url=url)
    next_day(crawl_sim)
    second = crawl("single_page", url=url)
    next_day(crawl_sim)
    third = crawl("single_page", url=url)
    got = [
        [(e["event"], e["transition"]) for e in run_events(crawl_sim.runtime, r.report.run_id)]
        for r in (first, second, third)
    ]
    assert got == [[("new", None)], [("failed", "regression")], [("unchanged", "recovery")]]
    assert run_events(crawl_sim.runtime, second.report.run_id, "regression")
    assert not run_events(crawl_sim.runtime, third.report.run_id, "regression")
    assert second.report.outcome.value == "failed"


def test_retry_failed_recrawls_failures_and_drains_the_queue(crawl_sim: Sim, crawl: Crawl) -> None:
    crawl("single_page", url=f"{INKWELL}/blog/flaky")
    next_day(crawl_sim)
    crawl("single_page", url=f"{INKWELL}/blog/flaky")  # fails on day 1
    pages.insert_urls(
        crawl_sim.runtime.store, [f"{INKWELL}/blog/post-02"], crawl_sim.runtime.clock.now()
    )
    next_day(crawl_sim)
    crawl_sim.web.clear_requests()
    result = crawl("retry_failed")
    asked = _paths(crawl_sim)
    assert "/blog/flaky" in asked and "/blog/post-02" in asked
    assert "/blog" in asked  # the seed, still queued, and links of retried pages are followed
    rows = _rows(crawl_sim, "inkwell")
    assert rows[f"{INKWELL}/blog/flaky"]["crawl_status"] == "CRAWLED"
    assert result.report.outcome.value == "success"


def test_resume_drains_only_pending_rows(crawl_sim: Sim) -> None:
    runtime = crawl_sim.runtime
    prepared = prepare(runtime, CrawlRequest("inkwell", "changed_new"))
    first = run_site_crawl(runtime, prepared, control=RunControl(max_requests=6))
    assert first.report.stop.value == "max_requests"
    done = {u for u, r in _rows(crawl_sim, "inkwell").items() if r["crawl_status"] == "CRAWLED"}
    assert done
    crawl_sim.web.clear_requests()
    resumed = run_site_crawl(runtime, prepare(runtime, CrawlRequest("inkwell", "resume")))
    asked = {f"{INKWELL}{p}" for p in _paths(crawl_sim)}
    # Only a pending redirect origin's followed hop (/news/to-docs -> /docs) asks again.
    assert asked & done <= {f"{INKWELL}/docs"}
    assert resumed.report.stop.value == "queue_empty"
    rows = _rows(crawl_sim, "inkwell")
    assert not [u for u, r in rows.items() if r["crawl_status"] in ("PENDING", "CRAWLING")]


def test_full_refetches_without_validators_and_reprocesses(crawl_sim: Sim, crawl: Crawl) -> None:
    crawl("changed_new", config="quill")
    crawl_sim.web.clear_requests()
    result = crawl("full", config="quill")
    asked = [r for r in crawl_sim.web.requests if r.path != "/robots.txt"]
    assert len(asked) == 4
    assert not [r for r in asked if r.if_none_match or r.if_modified_since]
    assert all(r.status == 200 for r in asked)
    assert result.events["unchanged"] + result.events["changed"] == 4


def test_reprocess_failed_works_from_stored_bytes_and_restores_on_failure(
    crawl_sim: Sim, crawl: Crawl
) -> None:
    crawl("changed_new", config="quill")
    _set(crawl_sim, f"{QUILL}/posts/q1", processing_status="failed")
    crawl_sim.web.clear_requests()
    result = crawl("reprocess_failed", config="quill")
    assert crawl_sim.web.requests == []  # no fetching
    assert result.report.counters["claimed"] == 1
    rows = _rows(crawl_sim, "quill")
    assert rows[f"{QUILL}/posts/q1"]["processing_status"] == "extracted"
    # A failure before the hand-off restores the prior status for a later re-run.
    before = rows[f"{QUILL}/posts/q2"]
    _set(crawl_sim, f"{QUILL}/posts/q2", processing_status="failed", object_key="sha256/00/missing")
    broken = crawl("reprocess_failed", config="quill")
    row = pages.page(crawl_sim.runtime.store, before["id"])
    assert row["processing_status"] == "failed"
    assert row["last_run_id"] == before["last_run_id"]
    run = crawl_sim.runtime.store.run(broken.report.run_id)
    assert run is not None and run["status"] == "FAILED" and run["error_message"]


def test_reindex_existing_reprocesses_extracted_files_in_scope_only(
    crawl_sim: Sim, crawl: Crawl
) -> None:
    crawl("changed_new", config="quill")
    crawl("single_page", url=f"{INKWELL}/blog/post-05")
    crawl_sim.web.clear_requests()
    result = crawl("reindex_existing", config="quill")
    assert crawl_sim.web.requests == []
    assert result.report.counters["claimed"] == 4
    events = run_events(crawl_sim.runtime, result.report.run_id)
    assert {e["url"] for e in events} == set(_rows(crawl_sim, "quill"))


def test_a_start_url_whose_listing_yields_nothing_fails_the_run(crawl_sim: Sim) -> None:
    runtime = crawl_sim.runtime
    add_config(runtime, "lonely", company="Quill Press", base_url=f"{QUILL}/posts/q1",
               allow_domains=[r"^quillpress\.com$"])  # fmt: skip
    result = run_site_crawl(runtime, prepare(runtime, CrawlRequest("lonely", "changed_new")))
    assert result.report.stop.value == "queue_empty"
    assert result.report.outcome.value == "failed"


def test_robots_disallowing_every_url_is_the_blocked_stop(crawl_sim: Sim) -> None:
    runtime = crawl_sim.runtime
    add_config(runtime, "private", company="Inkwell Press", base_url=f"{INKWELL}/private/area")
    result = run_site_crawl(runtime, prepare(runtime, CrawlRequest("private", "changed_new")))
    assert result.report.stop.value == "blocked"
    assert result.events["skipped"] == 1
    assert not [p for p in _paths(crawl_sim) if p.startswith("/private")]


def test_resume_processes_an_uploaded_file_without_downloading_it(
    crawl_sim: Sim, crawl: Crawl
) -> None:
    crawl("changed_new", config="quill")
    _set(crawl_sim, f"{QUILL}/posts/q3", processing_status="uploaded", crawl_status="PENDING")
    crawl_sim.web.clear_requests()
    result = crawl("resume", config="quill")
    assert crawl_sim.web.requests == []
    row = _rows(crawl_sim, "quill")[f"{QUILL}/posts/q3"]
    assert (row["crawl_status"], row["processing_status"]) == ("CRAWLED", "extracted")
    assert result.report.counters["claimed"] == 1


def test_reconcile_reads_the_run_row_never_the_pages(crawl_sim: Sim, crawl: Crawl) -> None:
    from catlas_assets.domain.vocabulary import RunKind
    from catlas_assets.services.crawl_configs import reconcile_run
    from catlas_assets.services.runs import RunRecorder

    runtime = crawl_sim.runtime
    config = pages.config_by_name(runtime.store, "quill")
    assert config is not None
    recorder = RunRecorder(runtime, RunKind.SITE_CRAWL, launch_handle="4242", extra={
        "mode": "resume", "config_id": config["id"], "status": "RUNNING",
    })  # fmt: skip
    assert reconcile_run(runtime, recorder.run_id, alive=True)["status"] == "RUNNING"
    row = reconcile_run(runtime, recorder.run_id, alive=False)
    assert row["status"] == "FAILED" and row["completed_at"] is not None
    assert "4242" in row["error_message"]
    done = crawl("resume", config="quill").report.run_id
    assert reconcile_run(runtime, done, alive=False)["status"] == "COMPLETED"


def test_the_local_launcher_runs_the_crawl_in_a_subprocess(
    crawl_sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    from catlas_assets.services.crawl_configs import reconcile_run
    from catlas_assets.services.crawl_launch import is_alive, launch_local

    runtime = crawl_sim.runtime
    settings = runtime.settings
    for name, value in (("STATE_DIR", settings.state_dir), ("DATABASE_URL", settings.database_url),
                        ("HOSTS", settings.hosts), ("NOW", runtime.clock.now().isoformat()),
                        ("DOMAIN_SPACING_S", "0")):  # fmt: skip
        monkeypatch.setenv(f"CATLAS_{name}", str(value))
    process = launch_local(runtime, CrawlRequest("quill", "changed_new"))
    assert process.wait(timeout=240) == 0
    assert not is_alive("local", str(process.pid))
    [row] = runtime.store.runs(kind="site_crawl")
    assert (row["launcher"], row["launch_handle"]) == ("local", str(process.pid))
    assert reconcile_run(runtime, row["id"], alive=False)["status"] == "COMPLETED"
    assert {r.host for r in crawl_sim.web.requests} == {"quillpress.com"}


def test_a_page_that_changed_between_runs_is_reprocessed(crawl_sim: Sim, crawl: Crawl) -> None:
    url = f"{INKWELL}/blog/post-03"
    assert crawl("single_page", url=url).events["new"] == 1
    same = crawl("single_page", url=url)
    assert same.events["unchanged"] == 1 and not same.report.productive
    next_day(crawl_sim)  # post 3 gains a paragraph on day 1
    changed = crawl("single_page", url=url)
    assert changed.events["changed"] == 1 and changed.report.productive
    row = _rows(crawl_sim, "inkwell")[url]
    assert row["snapshot_version"] == 2


def test_max_pages_stops_the_run_and_leaves_the_rest_queued(crawl_sim: Sim) -> None:
    runtime = crawl_sim.runtime
    add_config(runtime, "quill-capped", company="Quill Press", base_url=f"{QUILL}/",
               allow_domains=[r"^quillpress\.com$"], max_pages=2)  # fmt: skip
    result = run_site_crawl(runtime, prepare(runtime, CrawlRequest("quill-capped", "changed_new")))
    report = result.report
    assert (report.stop.value, report.detail) == ("max_requests", "Reached max pages (2)")
    assert report.counters["claimed"] == 2
    statuses = [r["crawl_status"] for r in _rows(crawl_sim, "quill-capped").values()]
    assert statuses.count("PENDING") == 2 and "CRAWLING" not in statuses
    assert report.coverage_gaps == 2
