"""kill -9 of a site crawl and of a reprocess at random points, on both backends, then a
restart: every run has a verdict (the killed ones closed as dead), every observation the
state says happened is in the lake exactly once, no page stays CRAWLING, no archived
object is truncated and no temp file survives. Real `catlas` processes, real fixture web."""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from catlas_assets.services import catalog
from catlas_assets.services.crawl_configs import add_config
from catlas_assets.services.dead_runs import DETAIL
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb
from tests.chaos.invariants import broken, measure
from tests.chaos.mesh_site import BASE_URL, HOST, mesh_root
from tests.chaos.processes import catlas_env, kill_when, run, start

PAGES = 40
KILLS = 2
CRAWL = ("crawl", "--config", "mesh", "--mode", "full")
# The hours around now (the crawls run on the real clock).
_TODAY = datetime.now(UTC).date()
REPROCESS = (
    "reprocess",
    "--from",
    str(_TODAY - timedelta(days=1)),
    "--to",
    str(_TODAY + timedelta(days=2)),
)


@pytest.fixture(scope="module")
def mesh_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureWeb]:
    with FixtureWeb(root=mesh_root(tmp_path_factory.mktemp("mesh"), PAGES, 60)) as web:
        yield web


def _pages_fetched(web: FixtureWeb) -> int:
    return sum(1 for r in web.requests if r.host == HOST and r.path.startswith("/p/"))


def _runtime(env: dict[str, str]) -> Runtime:
    return Runtime(Settings.from_env(env))


def crawl_campaign(web: FixtureWeb, env: dict[str, str], kills: int, rng: random.Random) -> int:
    """`kills` crawls killed after a random number of page requests, then one to the end;
    the faults injected (a crawl that finished before its kill point injects none)."""
    runtime = _runtime(env)
    try:
        if runtime.store.company_by_name("Mesh") is None:
            add_config(runtime, "mesh", company="Mesh", base_url=BASE_URL)
    finally:
        runtime.close()
    injected = 0
    for _ in range(kills):
        goal = _pages_fetched(web) + rng.randint(1, PAGES - 5)
        proc = start(env, *CRAWL)
        injected += kill_when(proc, functools.partial(_reached, web, goal))
    done = run(env, *CRAWL)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done
    return injected


def _reached(web: FixtureWeb, goal: int) -> bool:
    return _pages_fetched(web) >= goal


def reprocess_campaign(env: dict[str, str], kills: int, rng: random.Random) -> int:
    """`kills` reprocess runs killed a random moment (up to 30 ms) after their run row
    opened, inside their reads and partition writes, then one to the end; the faults: the
    kills that found their run still open (a short run may write its verdict first)."""
    injected = 0
    runtime = _runtime(env)
    try:
        for _ in range(kills):
            known = frozenset(r["id"] for r in runtime.store.runs(limit=10_000))
            proc = start(env, *REPROCESS)
            opened = functools.partial(_opened, runtime, known)
            if kill_when(proc, opened, pause=rng.uniform(0.0, 0.03)):
                injected += _opened(runtime, known)  # nothing closes it before the next run
    finally:
        runtime.close()
    done = run(env, *REPROCESS)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done
    return injected


def watch_the_mesh(runtime: Runtime) -> None:
    """A sensor on every mesh page: a tick gives reprocess one response per page."""
    company = catalog.add_company(runtime, name="Mesh watch", website=BASE_URL)
    for n in range(PAGES):
        catalog.add_sensor(runtime, company_id=company, surface="blog", url=f"{BASE_URL}p/{n}")


def _opened(runtime: Runtime, known: frozenset[str]) -> bool:
    return any(r["id"] not in known for r in runtime.store.open_runs())


def _killed_runs_closed(env: dict[str, str], kind: str) -> list[dict]:
    runtime = _runtime(env)
    try:
        return [r for r in runtime.store.runs(limit=10_000, kind=kind) if r["detail"] == DETAIL]
    finally:
        runtime.close()


def test_killed_site_crawls_are_closed_and_the_restart_loses_nothing(
    mesh_web: FixtureWeb, tmp_path: Path, database_url: str
) -> None:
    env = catlas_env(tmp_path, mesh_web, database_url, CATLAS_SITE_CRAWL_CONCURRENCY="4")

    injected = crawl_campaign(mesh_web, env, KILLS, random.Random(7))

    assert injected == KILLS
    closed = _killed_runs_closed(env, "site_crawl")
    assert len(closed) == KILLS
    assert {(r["stop"], r["status"]) for r in closed} == {("error", "FAILED")}
    runtime = _runtime(env)
    try:
        found = measure(runtime)
        assert broken(found) == {}
        assert found["rows checked"] >= PAGES + 1  # the restart crawled every page
    finally:
        runtime.close()


def test_killed_reprocess_runs_are_closed_and_the_restart_derives_it_all_once(
    mesh_web: FixtureWeb, tmp_path: Path, database_url: str
) -> None:
    env = catlas_env(tmp_path, mesh_web, database_url, CATLAS_SITE_CRAWL_CONCURRENCY="8")
    crawl_campaign(mesh_web, env, 0, random.Random(3))
    runtime = _runtime(env)
    try:
        clean = runtime.lake.read("snapshots").num_rows
    finally:
        runtime.close()

    injected = reprocess_campaign(env, KILLS, random.Random(5))

    assert 1 <= injected <= KILLS
    assert len(_killed_runs_closed(env, "reprocess")) == injected
    runtime = _runtime(env)
    try:
        assert broken(measure(runtime)) == {}
        con = runtime.lake.connect()
        try:
            n, distinct = con.execute(
                "SELECT count(*), count(DISTINCT snapshot_id) FROM snapshots"
            ).fetchone()
        finally:
            con.close()
        assert n == distinct == clean  # each snapshot once: none lost, none twice
    finally:
        runtime.close()
