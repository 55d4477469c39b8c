"""A site crawl of the fixture blog: queue, events, lake rows and the verdict (spec 003)."""

from __future__ import annotations

from catlas_assets.services import lake_checks
from catlas_assets.services.crawl_configs import config_webpages, run_events
from catlas_assets.services.sql import query
from tests.conftest import Sim
from tests.site_crawl.conftest import INKWELL, Crawl


def _hosts_asked(sim: Sim) -> set[str]:
    return {r.host for r in sim.web.requests}


def test_first_crawl_collects_every_post_and_records_nothing_out_of_scope(
    crawl_sim: Sim, crawl: Crawl
) -> None:
    result = crawl("changed_new")
    report = result.report
    assert report.outcome.value == "success", report.summary_line
    assert report.stop.value == "queue_empty"
    assert report.productive
    pages = {p["url"]: p for p in config_webpages(crawl_sim.runtime, "inkwell")}
    posts = [u for u in pages if u.startswith(f"{INKWELL}/blog/post-")]
    assert len(posts) == 45
    assert all(pages[u]["crawl_status"] == "CRAWLED" for u in posts)
    # Out of scope: never recorded, never asked.
    assert not any("quillpress" in u or "example.org" in u for u in pages)
    assert _hosts_asked(crawl_sim) <= {"inkwell-press.com"}
    # A redirect inside the scope: the origin is a redirect, the destination crawled once.
    old = pages[f"{INKWELL}/blog/old-post"]
    assert old["redirects_to"] == f"{INKWELL}/blog/post-01"
    moved = pages[f"{INKWELL}/blog/moved-out"]
    assert moved["crawl_status"] == "SKIPPED"
    assert moved["redirects_to"] is None
    assert "out of scope" in moved["skip_reason"]
    events = run_events(crawl_sim.runtime, report.run_id)
    by_url: dict[str, list[str]] = {}
    for e in events:
        by_url.setdefault(e["url"], []).append(e["event"])
    assert by_url[f"{INKWELL}/blog/old-post"] == ["redirected"]
    assert by_url[f"{INKWELL}/blog/moved-out"] == ["skipped"]
    assert result.events["new"] == report.counters["new"] > 45
    assert result.events["redirected"] == 2  # /blog/old-post and /news/to-docs


def test_observations_and_snapshots_carry_the_webpage_id(crawl_sim: Sim, crawl: Crawl) -> None:
    report = crawl("changed_new").report
    rows = query(
        crawl_sim.runtime,
        "SELECT o.webpage_id, o.crawl_config, w.url FROM observations o "
        f"JOIN webpages w ON w.webpage_id = o.webpage_id WHERE o.run_id = '{report.run_id}'",
    ).rows
    assert rows and all(r[0] is not None and r[1] == "inkwell" for r in rows)
    snaps = query(
        crawl_sim.runtime, "SELECT count(*) FROM snapshots WHERE webpage_id IS NOT NULL"
    ).rows
    assert snaps[0][0] > 45
    events = query(
        crawl_sim.runtime, f"SELECT count(*) FROM run_events WHERE run_id = '{report.run_id}'"
    ).rows
    assert events[0][0] == len(run_events(crawl_sim.runtime, report.run_id)) > 45
    # Two redirect origins write events but no observation: the run's own count is checked.
    for partition in crawl_sim.runtime.lake.partitions("observations"):
        finding = lake_checks.counts_match_runs(crawl_sim.runtime, partition)
        assert finding.passed and finding.metadata["runs_compared"] == 1, finding.metadata


def test_a_changed_new_recrawl_of_an_unchanged_site_reprocesses_nothing(
    crawl_sim: Sim, crawl: Crawl
) -> None:
    crawl("changed_new")
    crawl_sim.web.clear_requests()
    again = crawl("changed_new")
    assert again.events["new"] == again.events["changed"] == 0
    assert again.events["unchanged"] > 45
    assert not again.report.productive
    assert again.report.outcome.value == "success"
    # Every page processed before is asked conditionally; post-01 is reached through the
    # redirect of /blog/old-post (a redirect origin has no file, so no validators), and its
    # unchanged bytes take the hash path instead.
    posts = [r for r in crawl_sim.web.requests if r.path.startswith("/blog/post-")]
    assert len(posts) == 45
    direct = [r for r in posts if r.path != "/blog/post-01"]
    assert all(r.if_none_match or r.if_modified_since for r in direct)
    assert all(r.status == 304 for r in direct)
    snaps = query(
        crawl_sim.runtime,
        f"SELECT count(*) FROM snapshots WHERE run_id = '{again.report.run_id}'",
    ).rows
    assert snaps[0][0] == 0
