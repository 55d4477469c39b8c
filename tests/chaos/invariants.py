"""What must hold after any fault, read from the state and the lake as a user would see them.

One `measure` over a runtime gives the figures of the `make reliability` table: the fast
tests assert them to be zero, the campaign adds them up.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from catlas_assets.domain.content_address import archive_key
from catlas_assets.domain.vocabulary import CrawlStatus
from catlas_assets.services import lake_checks
from catlas_assets.services.dead_runs import TMP_MAX_AGE_S
from catlas_assets.services.runtime import Runtime
from resources.process_alive import alive

# The counters of a finished run that each stand for one observation row it wrote.
COUNTED = ("ok", "changed", "unchanged", "not_modified", "failed", "redirected")
# The kinds of run that write observations.
OBSERVING = ("tick", "site_crawl")
ZERO = (
    "rows lost",
    "duplicates",
    "runs without a verdict",
    "claims past their timeout",
    "pages left crawling",
    "objects truncated",
    "keys dangling",
    "temp files left",
)


def measure(runtime: Runtime) -> Counter[str]:
    """The invariants' figures: `rows checked`, and every name of ZERO (each must be 0)."""
    found: Counter[str] = Counter({name: 0 for name in ZERO})
    store = runtime.store
    runs = store.runs(limit=1_000_000)
    found["runs without a verdict"] = sum(1 for r in runs if r["completed_at"] is None)
    per_run: dict[str, int] = {}
    page_urls: set[tuple[str, str]] = set()
    if runtime.lake.files("observations"):
        con = runtime.lake.connect()
        try:
            rows = con.execute(
                "SELECT run_id, count(*), count(DISTINCT observation_id) FROM observations "
                "GROUP BY run_id"
            ).fetchall()
            page_urls = {
                (str(run), str(url))
                for run, url in con.execute("SELECT run_id, url FROM observations").fetchall()
            }
        finally:
            con.close()
        per_run = {str(run): int(n) for run, n, _ in rows}
        found["rows checked"] = sum(per_run.values())
        found["duplicates"] = sum(int(n) - int(distinct) for _, n, distinct in rows)
    for run in runs:
        if run["kind"] in OBSERVING and run["completed_at"] is not None:
            claimed = sum(int(run[k] or 0) for k in COUNTED)
            found["rows lost"] += max(0, claimed - per_run.get(run["id"], 0))
    found["rows lost"] += store.outbox_size()
    # A page the state says was crawled by a run has that run's observation in the lake.
    with store.engine.connect() as conn:
        crawled = conn.exec_driver_sql(
            "SELECT last_run_id, url, crawl_status FROM webpages WHERE last_run_id IS NOT NULL"
        ).fetchall()
    found["rows lost"] += sum(
        1
        for run, url, status in crawled
        if status == CrawlStatus.CRAWLED.value and (str(run), str(url)) not in page_urls
    )
    found["pages left crawling"] = sum(
        1 for row in _statuses(runtime) if row == CrawlStatus.CRAWLING.value
    )
    oldest = runtime.clock.now() - timedelta(seconds=runtime.settings.claim_timeout_s)
    found["claims past their timeout"] = sum(
        1 for s in store.list_sensors() if s["claimed_at"] is not None and s["claimed_at"] < oldest
    )
    keys = lake_checks.object_keys(runtime.lake) if runtime.lake.files("observations") else set()
    found["keys dangling"] = sum(1 for k in keys if not runtime.archive.exists(k))
    found["objects truncated"] = sum(1 for k in keys if not _whole(runtime, k))
    found["temp files left"] = len(runtime.storage.stale_tmp_files(alive, TMP_MAX_AGE_S))
    return found


def _statuses(runtime: Runtime) -> list[str]:
    with runtime.store.engine.connect() as conn:
        return [r[0] for r in conn.exec_driver_sql("SELECT crawl_status FROM webpages")]


def _whole(runtime: Runtime, key: str) -> bool:
    """The object decompresses to bytes whose address is its key (content-addressed)."""
    if not runtime.archive.exists(key):
        return True  # counted as dangling, not as truncated
    try:
        data = runtime.archive.get(key)
    except Exception:  # zstd refuses a cut frame: that is what this looks for
        return False
    return archive_key(data) == key


def broken(found: Counter[str]) -> dict[str, int]:
    """The invariants that do not hold (an empty dict when all do)."""
    return {name: found[name] for name in ZERO if found[name]}
