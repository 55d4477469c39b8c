"""Bad input and a bad environment: one error line, the right exit code, nothing stored changed.

Every case starts from its own copy of one seeded state (a company, a careers sensor that
ran once, so the lake holds an observation) and runs one `catlas` command in a subprocess.
The commands are independent, so the module fixture runs them side by side and each test
then checks one case's result and compares the stored state before and after.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_harness import (
    Catlas,
    Result,
    assert_one_error_line,
    db_count,
    iso,
    lake_rows,
    stored_state,
)

from fixture_web import DEFAULT_NOW, FixtureWeb

EXIT_BAD_INPUT = 2
EXIT_ENVIRONMENT = 3

NOW = iso(DEFAULT_NOW + timedelta(hours=1))
# A week and a day later every sensor is due, so a tick would claim and fetch.
ALL_DUE = iso(DEFAULT_NOW + timedelta(days=8))
UNREACHABLE_DB = "postgresql+psycopg://postgres@127.0.0.1:1/nope"
# Relative to the case's folder: `a-file` is a regular file, so nothing can be made below it.
BELOW_A_FILE = "{case}/a-file/lake"


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    code: int
    mentions: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


def add_sensor(*extra: str, company: str = "Northwind Robotics") -> tuple[str, ...]:
    return ("sensors", "add", "--company", company, *extra)


CASES = [
    Case("unknown-sensor", ("run-sensor", "999"), EXIT_BAD_INPUT, ("999",)),
    Case(
        "url-not-a-url",
        add_sensor("--surface", "pricing", "--url", "notaurl"),
        EXIT_BAD_INPUT,
        ("notaurl",),
    ),
    Case(
        "url-ftp",
        add_sensor("--surface", "pricing", "--url", "ftp://x"),
        EXIT_BAD_INPUT,
        ("ftp://x",),
    ),
    Case(
        "unknown-company",
        add_sensor(
            "--surface", "pricing", "--url", "http://nope.example/pricing", company="Nope Inc"
        ),
        EXIT_BAD_INPUT,
        ("Nope Inc",),
    ),
    Case(
        "unknown-surface",
        add_sensor("--surface", "wiki", "--url", "http://northwind-robotics.com/wiki"),
        EXIT_BAD_INPUT,
        ("--surface", "'wiki'"),
    ),
    Case(
        "duplicate-company",
        ("companies", "add", "Northwind Robotics", "--website", "http://northwind-robotics.com"),
        EXIT_BAD_INPUT,
        ("Northwind Robotics", "already exists"),
    ),
    Case(
        "malformed-sql",
        ("sql", "selec surface fro observations"),
        EXIT_BAD_INPUT,
        ("SQL error", "selec"),
    ),
    Case(
        "database-unreachable",
        ("run-sensor", "1"),
        EXIT_ENVIRONMENT,
        ("state database", "127.0.0.1:1"),
        {"CATLAS_DATABASE_URL": UNREACHABLE_DB},
    ),
    Case(
        "database-unreachable-db-current",
        ("db", "current"),
        EXIT_ENVIRONMENT,
        ("state database", "127.0.0.1:1"),
        {"CATLAS_DATABASE_URL": UNREACHABLE_DB},
    ),
    Case(
        "lake-unwritable-run-sensor",
        ("run-sensor", "1", "--force"),
        EXIT_ENVIRONMENT,
        ("lake", "a-file"),
        {"CATLAS_LAKE_URL": BELOW_A_FILE},
    ),
    Case(
        "lake-unwritable-schedule",
        ("schedule", "--once"),
        EXIT_ENVIRONMENT,
        ("lake", "a-file"),
        {"CATLAS_LAKE_URL": BELOW_A_FILE, "CATLAS_NOW": ALL_DUE},
    ),
    Case(
        "state-dir-unwritable-demo",
        ("demo",),
        EXIT_ENVIRONMENT,
        ("lake", "a-file"),
        {"CATLAS_STATE_DIR": "{case}/a-file/state"},
    ),
    Case(
        "hosts-bad-line",
        ("run-sensor", "1", "--force"),
        EXIT_ENVIRONMENT,
        ("CATLAS_HOSTS", "line 3"),
        {"CATLAS_HOSTS": "{case}/bad-hosts"},
    ),
    Case(
        "now-not-iso",
        ("run-sensor", "1"),
        EXIT_ENVIRONMENT,
        ("CATLAS_NOW", "next tuesday"),
        {"CATLAS_NOW": "next tuesday"},
    ),
    Case(
        "now-not-utc",
        ("run-sensor", "1"),
        EXIT_ENVIRONMENT,
        ("CATLAS_NOW", "UTC"),
        {"CATLAS_NOW": "2026-01-05T09:00:00+02:00"},
    ),
]


@dataclass(frozen=True)
class Outcome:
    result: Result
    before: dict[str, Any]
    after: dict[str, Any]
    state: Path


@pytest.fixture(scope="module")
def outcomes(
    tmp_path_factory: pytest.TempPathFactory,
    web_server: FixtureWeb,
    seed: Callable[..., int],
) -> Iterator[dict[str, Outcome]]:
    web_server.set_now(DEFAULT_NOW)
    root = tmp_path_factory.mktemp("bad-input")
    hosts = web_server.write_hosts_file(root / "fixture-hosts")
    seeded = root / "seeded" / ".catlas"
    seed(
        seeded,
        hosts,
        now=DEFAULT_NOW,
        company="Northwind Robotics",
        website="http://northwind-robotics.com",
        surface="careers",
        url="http://northwind-robotics.com/careers",
        run=True,
    )

    def one(case: Case) -> Outcome:
        folder = root / case.id
        state = folder / ".catlas"
        shutil.copytree(seeded, state)
        (folder / "a-file").write_text("a regular file, not a folder\n")
        good = hosts.read_text().splitlines()
        (folder / "bad-hosts").write_text("\n".join([*good, "127.0.0.1 no-port.example"]) + "\n")
        env = {"CATLAS_HOSTS": str(hosts), "CATLAS_NOW": NOW}
        env.update({k: v.format(case=folder) for k, v in case.env.items()})
        before = stored_state(state)
        result = Catlas(folder, env).run(*case.args)
        return Outcome(result, before, stored_state(state), state)

    with ThreadPoolExecutor(max_workers=3) as pool:
        done = dict(zip((c.id for c in CASES), pool.map(one, CASES), strict=True))
    yield done
    web_server.set_now(DEFAULT_NOW)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_error_line_and_changes_nothing(
    case: Case, outcomes: dict[str, Outcome]
) -> None:
    outcome = outcomes[case.id]
    assert_one_error_line(outcome.result, case.code, *case.mentions)
    assert outcome.result.out == "", str(outcome.result)
    # Nothing stored moved: not a row in any table, not a lake file, not .last_run.json.
    assert outcome.after == outcome.before
    assert db_count(outcome.state, "sensors") == 1
    assert db_count(outcome.state, "companies") == 1
    assert db_count(outcome.state, "crawl_runs") == 1
    assert len(lake_rows(outcome.state, "observations")) == 1


def test_the_seeded_state_is_one_ok_observation(outcomes: dict[str, Outcome]) -> None:
    """The baseline the cases compare with holds what they could have changed."""
    state = outcomes["unknown-sensor"].state
    assert [r["outcome"] for r in lake_rows(state, "observations", "outcome")] == ["ok"]
    assert db_count(state, "crawl_runs") == 1
