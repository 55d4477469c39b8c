"""`catlas onboard` and `catlas demo` take the run options as a shell sees them: the verdict
line, the exit code under --fail-when, `.last_run.json`, and what is left in the queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixture_web import DEFAULT_NOW, FixtureWeb
from tests.cli.cli_harness import Catlas, assert_no_traceback, assert_one_error_line, db_rows, iso

COMPANIES = (
    ("Harborlight", "http://harborlight.com"),
    ("Lanternfish", "http://lanternfish.ai"),
    ("Cobalt Mills", "http://cobaltmills.com"),
)


@pytest.fixture
def cli(tmp_path: Path, web: FixtureWeb) -> Catlas:
    hosts = web.write_hosts_file(tmp_path / "fixture-hosts")
    return Catlas(
        tmp_path,
        {"CATLAS_HOSTS": str(hosts), "CATLAS_NOW": iso(DEFAULT_NOW), "CATLAS_FETCH_RETRIES": "0"},
    )


@pytest.fixture
def queued(cli: Catlas, tmp_path: Path) -> Path:
    for name, url in COMPANIES:
        cli.ok("companies", "add", name, "--website", url)
    return tmp_path / ".catlas"


def jobs(state: Path) -> dict[str, tuple[str, int]]:
    rows = db_rows(
        state,
        "SELECT c.name, j.status, j.attempts FROM queue_jobs j "
        "JOIN companies c ON c.id = j.company_id",
    )
    return {name: (status, attempts) for name, status, attempts in rows}


def test_onboard_pending_with_max_requests_stops_the_batch_and_leaves_the_rest_queued(
    cli: Catlas, queued: Path, web: FixtureWeb
) -> None:
    result = cli.run("onboard", "--pending", "-n", "1")
    assert_no_traceback(result)
    assert result.code == 0, str(result)
    assert "verdict: success" in result.out and "stop: max_requests" in result.out, str(result)
    assert jobs(queued) == {
        "Harborlight": ("done", 1),
        "Lanternfish": ("pending", 0),
        "Cobalt Mills": ("pending", 0),
    }
    last = json.loads((queued / ".last_run.json").read_text())["discovery"]
    assert (last["stop"], last["outcome"], last["coverage_gaps"]) == ("max_requests", "success", 2)
    assert not {"lanternfish.ai", "cobaltmills.com"} & {r.host for r in web.requests}

    # The next batch, unbounded, takes the companies left waiting.
    again = cli.run("onboard", "--pending")
    assert again.code == 0 and "stop: queue_empty" in again.out, str(again)
    assert {status for status, _ in jobs(queued).values()} == {"done"}


def test_onboard_stopped_before_the_first_company_is_not_started_and_exits_1(
    cli: Catlas, queued: Path, web: FixtureWeb
) -> None:
    for args in (("--pending", "-n", "0"), ("--company", "Lanternfish", "--deadline", "0")):
        result = cli.run("onboard", *args)
        assert_no_traceback(result)
        assert result.code == 1, str(result)
        assert "verdict: failed" in result.out and "Not started" in result.out, str(result)
    never = cli.run("onboard", "--pending", "-n", "0", "--fail-when", "never")
    assert never.code == 0 and "Not started" in never.out, str(never)
    assert web.requests == []
    assert set(jobs(queued).values()) == {("pending", 0)}
    assert db_rows(queued, "SELECT count(*) FROM crawl_runs") == [(0,)]


def test_onboard_rejects_a_malformed_deadline_as_bad_input(cli: Catlas, queued: Path) -> None:
    result = cli.run("onboard", "--pending", "--deadline", "soon")
    assert result.code == 2, str(result)
    assert "is not a duration" in result.err
    assert set(jobs(queued).values()) == {("pending", 0)}


def test_demo_with_a_deadline_already_passed_is_not_started_and_resets_nothing(
    cli: Catlas, tmp_path: Path
) -> None:
    state = tmp_path / ".catlas"
    state.mkdir()
    (state / "demo.json").write_text('{"run_id": "earlier", "days": 14}\n')
    result = cli.run("demo", "--days", "14", "--deadline", "0")
    assert_no_traceback(result)
    assert result.code == 1, str(result)
    assert "verdict: failed" in result.out and "Not started" in result.out, str(result)
    assert "demo state" not in result.out
    assert (state / "demo.json").read_text() == '{"run_id": "earlier", "days": 14}\n'
    never = cli.run("demo", "--days", "14", "--deadline", "0", "--fail-when", "never")
    assert never.code == 0, str(never)


def test_demo_and_onboard_list_the_run_options_in_their_help(cli: Catlas) -> None:
    for command in ("demo", "onboard"):
        out = cli.ok(command, "--help").out
        assert all(opt in out for opt in ("--max-requests", "--deadline", "--fail-when"))
    assert_one_error_line(cli.run("demo", "--fail-when", "sometimes"), 2, "--fail-when")
