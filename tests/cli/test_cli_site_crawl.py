"""The site-crawl commands as a user types them: configs, crawl, webpages, runs (spec 003)."""

from __future__ import annotations

import csv
import io
import json

from cli_harness import Catlas

from fixture_web import FixtureWeb

QUILL = "http://quillpress.com"


def test_configs_crawl_webpages_and_runs(catlas: Catlas, web: FixtureWeb) -> None:
    added = catlas.run("crawl-configs", "add", "quill", "--company", "Quill Press",
                       "--base-url", f"{QUILL}/", "--max-pages", "50")  # fmt: skip
    assert added.code == 0, added
    listed = catlas.run("crawl-configs", "list")
    assert "quill" in listed.out and "quillpress" in listed.out

    crawled = catlas.run("crawl", "--config", "quill", "--mode", "changed_new")
    assert crawled.code == 0, crawled
    assert "events: new=4 unchanged=0 changed=0 failed=0 skipped=0 redirected=0" in crawled.out
    assert "verdict: success" in crawled.out

    pages = catlas.run("webpages", "--config", "quill", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(pages.out)))
    assert {r["url"] for r in rows} == {f"{QUILL}/", *(f"{QUILL}/posts/q{i}" for i in (1, 2, 3))}
    assert {r["crawl_status"] for r in rows} == {"CRAWLED"}
    as_json = json.loads(catlas.run("webpages", "--config", "quill", "--format", "json").out)
    assert len(as_json) == 4

    runs = catlas.run("runs", "--kind", "site_crawl")
    assert runs.code == 0 and "changed_new" in runs.out and "COMPLETED" in runs.out
    run_id = next(w for w in runs.out.split() if w.startswith("run_"))
    shown = catlas.run("runs", "show", run_id, "--events")
    assert shown.code == 0, shown
    assert "events: 4" in shown.out and f"{QUILL}/posts/q2" in shown.out
    none = catlas.run("runs", "show", run_id, "--transition", "regression")
    assert "events: 0" in none.out


def test_refused_inputs_exit_2_with_one_line_and_send_nothing(
    catlas: Catlas, web: FixtureWeb
) -> None:
    assert catlas.run("crawl-configs", "add", "quill", "--company", "Quill Press",
                      "--base-url", f"{QUILL}/").code == 0  # fmt: skip
    for args in (
        ("--mode", "single_page", "--url", "http://inkwell-press.com/blog"),  # out of scope
        ("--mode", "single_page", "--url", f"{QUILL}/", "--path", "/posts"),
        ("--mode", "single_page"),
        ("--mode", "path_scope"),
        ("--mode", "sideways"),
    ):
        refused = catlas.run("crawl", "--config", "quill", *args)
        assert refused.code == 2, refused
        assert len(refused.err_lines) == 1 and refused.err_lines[0].startswith("catlas: error:")
    assert web.requests == []
