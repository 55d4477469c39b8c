"""`catlas review list|show|accept|reject` on SQLite and PostgreSQL, against the fixture web.

State is set up through the services (a sensor that broke on day 3 and the repair pass that
put it in the queue); the commands run through the real `catlas` group.
"""

from __future__ import annotations

from click.testing import CliRunner

from catlas_assets.cli import cli
from catlas_assets.services import catalog
from catlas_assets.services.repair import repair_pass
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from fixture_web import DEFAULT_NOW, FixtureWeb, at_day
from resources.state import repair_store

SITE = "http://wayfarer-tools.com"


def _catlas(runtime: Runtime, *args: str):
    s = runtime.settings
    env = {
        "CATLAS_STATE_DIR": s.state_dir,
        "CATLAS_DATABASE_URL": s.database_url,
        "CATLAS_HOSTS": s.hosts,
        "CATLAS_NOW": runtime.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "CATLAS_DOMAIN_SPACING_S": "0",
        "COLUMNS": "250",
    }
    return CliRunner().invoke(cli, list(args), env=env)


def _broken(runtime: Runtime, web: FixtureWeb, surface: str, path: str) -> int:
    """A sensor with a baseline on day 0 that fails twice from day 3 (`failing`)."""
    found = runtime.store.company_by_name("Wayfarer Tools")
    company_id = (
        found["id"] if found else catalog.add_company(runtime, name="Wayfarer Tools", website=SITE)
    )
    sensor_id = catalog.add_sensor(runtime, company_id=company_id, surface=surface, url=SITE + path)
    runtime.clock.set(DEFAULT_NOW)
    web.set_now(DEFAULT_NOW)
    run_one(runtime, sensor_id)
    for day in (3, 4):
        runtime.clock.set(at_day(day))
        web.set_now(at_day(day))
        run_one(runtime, sensor_id, force=True)
    assert runtime.store.sensor(sensor_id)["status"] == "failing"
    return sensor_id


def test_accept_migrates_to_the_chosen_candidate_and_reject_retires_or_keeps(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    team = _broken(runtime, web, "people", "/team")
    (attempt,) = repair_pass(runtime, sensor_id=team).attempts
    assert attempt.decision.action.value == "review"
    (item,) = runtime.store.list_review(kind="sensor_migration")

    listed = _catlas(runtime, "review", "list")
    assert listed.exit_code == 0 and "sensor_migration" in listed.output
    shown = _catlas(runtime, "review", "show", str(item["id"]))
    assert f"{SITE}/people" in shown.output and f"{SITE}/about/team" in shown.output

    ambiguous = _catlas(runtime, "review", "accept", str(item["id"]))
    assert ambiguous.exit_code != 0
    assert runtime.store.sensor(team)["status"] == "failing"  # nothing happened
    wrong = _catlas(runtime, "review", "accept", str(item["id"]), "--to", f"{SITE}/prices")
    assert wrong.exit_code != 0

    accepted = _catlas(
        runtime, "review", "accept", str(item["id"]), "--to", f"{SITE}/about/team", "--note", "ok"
    )
    assert accepted.exit_code == 0, accepted.output
    old = runtime.store.sensor(team)
    assert old["status"] == "retired"
    new = runtime.store.sensor(old["config"]["successor_id"])
    assert new["url"] == f"{SITE}/about/team" and new["status"] == "pending"
    assert new["config"]["predecessor_id"] == team and new["discovery_method"] == "repair"
    closed = repair_store.review_item(runtime.store, item["id"])
    assert closed["status"] == "accepted"
    assert closed["detail"]["resolution"]["successor_id"] == new["id"]
    again = _catlas(runtime, "review", "accept", str(item["id"]))
    assert again.exit_code != 0  # closed items stay closed

    now = runtime.clock.now()
    pricing = _broken(runtime, web, "pricing", "/pricing")
    docs = _broken(runtime, web, "docs", "/docs")
    for sensor_id in (pricing, docs):
        repair_store.open_review(
            runtime.store,
            "sensor_migration",
            runtime.store.sensor(sensor_id),
            {"from": "x", "candidates": []},
            now,
        )
    items = {i["sensor_id"]: i["id"] for i in runtime.store.list_review(kind="sensor_migration")}
    assert _catlas(runtime, "review", "reject", str(items[pricing]), "--retire").exit_code == 0
    assert _catlas(runtime, "review", "reject", str(items[docs]), "--keep").exit_code == 0
    assert runtime.store.sensor(pricing)["status"] == "retired"
    assert runtime.store.sensor(docs)["status"] == "failing"
    assert repair_store.review_item(runtime.store, items[docs])["status"] == "rejected"


def test_a_blocked_source_closes_only_once_robots_allows_again(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    company = catalog.add_company(runtime, name="Flip", website="http://robots-flip.faultline.dev")
    sensor_id = catalog.add_sensor(
        runtime, company_id=company, surface="careers", url="http://robots-flip.faultline.dev/jobs"
    )
    run_one(runtime, sensor_id)
    assert runtime.store.sensor(sensor_id)["status"] == "blocked"
    (item,) = runtime.store.list_review(kind="blocked_source")
    refused = _catlas(runtime, "review", "accept", str(item["id"]))
    assert refused.exit_code != 0
    assert repair_store.review_item(runtime.store, item["id"])["status"] == "open"
    kept = _catlas(runtime, "review", "reject", str(item["id"]), "--keep")
    assert kept.exit_code != 0  # closing it while robots.txt refuses is refused too

    runtime.clock.set(at_day(3))
    web.set_now(at_day(3))  # robots.txt allows everything from day 3
    accepted = _catlas(runtime, "review", "accept", str(item["id"]), "--note", "robots ok")
    assert accepted.exit_code == 0, accepted.output
    assert repair_store.review_item(runtime.store, item["id"])["status"] == "accepted"
    assert runtime.store.sensor(sensor_id)["status"] == "active"


def test_review_show_of_an_unknown_item_is_an_error(make_runtime, database_url: str) -> None:
    runtime = make_runtime(database_url)
    result = CliRunner().invoke(
        cli,
        ["review", "show", "999"],
        env={"CATLAS_STATE_DIR": runtime.settings.state_dir, "CATLAS_DATABASE_URL": database_url},
    )
    assert result.exit_code != 0


def test_catlas_repair_dry_run_writes_nothing_then_the_pass_migrates(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    pricing = _broken(runtime, web, "pricing", "/pricing")
    before = runtime.store.sensor(pricing)
    dry = _catlas(runtime, "repair", "--dry-run", "--sensor", str(pricing))
    assert dry.exit_code == 0, dry.output
    assert f"{SITE}/plans" in dry.output and "migrate" in dry.output
    assert f"{SITE}/prices" in dry.output  # the decoy is scored, and fails
    assert "nothing was written" in dry.output
    assert runtime.store.sensor(pricing) == before
    assert runtime.store.runs(kind="repair") == []

    done = _catlas(runtime, "repair", "--sensor", str(pricing))
    assert done.exit_code == 0, done.output
    assert "verdict: success" in done.output
    old = runtime.store.sensor(pricing)
    assert runtime.store.sensor(old["config"]["successor_id"])["url"] == f"{SITE}/plans"
    (run,) = runtime.store.runs(kind="repair")
    assert run["productive"] and run["outcome"] == "success"


def test_an_attempt_never_sends_more_than_its_request_budget(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, repair_max_requests=2)
    pricing = _broken(runtime, web, "pricing", "/pricing")
    web.clear_requests()
    (attempt,) = repair_pass(runtime, sensor_id=pricing).attempts
    assert len(web.requests) <= 2 and attempt.requests == len(web.requests)
    # The budget ran out before any candidate could be fetched: nothing was migrated.
    assert attempt.decision.action.value in ("wait", "review")
    assert not runtime.store.sensor(pricing)["config"].get("successor_id")
