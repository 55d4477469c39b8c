"""The demo end to end: fifteen simulated days against the fixture web find what the
timeline planted, nothing else, and leave a lake that plain DuckDB reads."""

from __future__ import annotations

import tomllib
from collections import Counter
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from catlas_assets.services.demo import DemoResult, fixtures_dir, run_demo
from catlas_assets.settings import Settings
from fixture_web import EPOCH

TIMELINE = tomllib.loads((fixtures_dir() / "web" / "timeline.toml").read_text())["change"]
DAYS = 21


@pytest.fixture(scope="module")
def demo_state(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, DemoResult]:
    state = tmp_path_factory.mktemp("demo") / ".catlas"
    return state, run_demo(Settings(state_dir=str(state)), days=DAYS)


def _planted(expect: str) -> list[dict]:
    return [c for c in TIMELINE if c["expect"] == expect and c["day"] < DAYS]


def test_every_planted_content_change_is_detected_on_or_after_its_day(
    demo_state: tuple[Path, DemoResult],
) -> None:
    _, result = demo_state
    for planted in _planted("change"):
        since = EPOCH + timedelta(days=planted["day"])
        hits = [
            c
            for c in result.changes
            if c["company"] == planted["company"]
            and c["surface"] == planted["surface"]
            and c["detected_at"] >= since
        ]
        assert hits, f"not detected: {planted['what']}"


def test_no_change_is_reported_that_the_timeline_did_not_plant(
    demo_state: tuple[Path, DemoResult],
) -> None:
    _, result = demo_state
    planted = Counter((c["company"], c["surface"]) for c in _planted("change"))
    detected = Counter((c["company"], c["surface"]) for c in result.changes)
    extra = {key: n for key, n in detected.items() if n > planted.get(key, 0)}
    assert not extra, f"changes beyond the planted ones: {extra}"
    for change in result.changes:
        first_day = min(
            c["day"]
            for c in _planted("change")
            if (c["company"], c["surface"]) == (change["company"], change["surface"])
        )
        assert change["detected_at"] >= EPOCH + timedelta(days=first_day)


def test_a_removed_page_fails_as_page_removed_and_a_moved_page_is_followed(
    demo_state: tuple[Path, DemoResult],
) -> None:
    state, _ = demo_state
    lake = state / "lake"
    con = duckdb.connect()
    observations = f"read_parquet('{lake}/observations/*/*/*.parquet', hive_partitioning = true)"
    for removed in _planted("removed"):
        url = f"http://{removed['host']}{removed['path']}"
        rows = con.execute(
            f"SELECT failure_class FROM {observations} WHERE url = ? AND fetched_at >= ?",
            [url, EPOCH + timedelta(days=removed["day"])],
        ).fetchall()
        assert rows and {r[0] for r in rows} == {"PAGE_REMOVED"}
    for moved in _planted("redirect"):
        url = f"http://{moved['host']}{moved['path']}"
        target = f"http://{moved['host']}{moved['location']}"
        since = EPOCH + timedelta(days=moved["day"] + 1)
        finals = con.execute(
            f"SELECT DISTINCT final_url FROM {observations} WHERE url = ? AND fetched_at >= ?",
            [url, since],
        ).fetchall()
        assert set(finals) <= {(target,)}
        # A same-domain 301 seen twice moves the sensor: later fetches ask the target itself.
        direct = con.execute(
            f"SELECT count(*) FROM {observations} WHERE url = ? AND final_url = ? AND fetched_at >= ?",
            [target, target, since],
        ).fetchone()
        assert direct is not None and direct[0] > 0


def _readme_plain_query() -> str:
    """The plain-DuckDB query the README's quick start gives analysts."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    return readme.split("```sql\n", 1)[1].split("```", 1)[0]


def test_the_lake_reads_the_same_through_catlas_and_plain_duckdb(
    demo_state: tuple[Path, DemoResult],
) -> None:
    """The README's plain query counts each change once, hidden compaction inputs or not
    (they stay on disk for an hour after a compaction replaced them)."""
    state, result = demo_state
    query = _readme_plain_query().replace(".catlas/", f"{state}/")
    plain = duckdb.connect().execute(f"SELECT count(*) FROM ({query})").fetchone()
    assert plain == (len(result.changes),)
    assert result.report.outcome.value == "success"
    assert result.report.stop.value == "queue_empty"
    # The demo ends with one site crawl of the fixture blog.
    assert result.site_crawl is not None
    assert result.site_crawl.report.outcome.value == "success"
    assert result.site_crawl.events["new"] >= 45


def test_running_the_demo_again_resets_its_state_and_says_so(
    demo_state: tuple[Path, DemoResult],
) -> None:
    state, first = demo_state
    again = run_demo(Settings(state_dir=str(state)), days=DAYS)
    assert again.reset is True and first.reset is False
    # The same changes; changes detected within the same hours may swap places, since
    # fetch times carry scheduling jitter and real-time politeness spacing.
    assert sorted((c["company"], c["surface"], c["kind"]) for c in again.changes) == sorted(
        (c["company"], c["surface"], c["kind"]) for c in first.changes
    )


def test_the_demo_repairs_the_moved_pages(demo_state: tuple[Path, DemoResult]) -> None:
    _, result = demo_state
    repaired = {(r["company"], r["surface"]): r for r in result.repairs}
    for removed in _planted("removed"):
        if "successor" not in removed:
            continue
        repair = repaired[removed["company"], removed["surface"]]
        assert repair["from"] == f"http://{removed['host']}{removed['path']}"
        assert repair["to"] == f"http://{removed['host']}{removed['successor']}"
        assert repair["how"].startswith("migrated by repair")
    for moved in _planted("redirect"):
        repair = repaired[moved["company"], moved["surface"]]
        assert repair["to"] == f"http://{moved['host']}{moved['location']}"
        assert repair["how"] == "followed a permanent redirect"
