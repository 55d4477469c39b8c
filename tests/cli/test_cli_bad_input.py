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
    # Files written into the case's folder first (name -> text); `{case}` in args names it.
    files: dict[str, str] = field(default_factory=dict)


def add_sensor(*extra: str, company: str = "Northwind Robotics") -> tuple[str, ...]:
    return ("sensors", "add", "--company", company, *extra)


HUGE = "99999999999999999999"  # beyond any 64-bit integer column

# Numbers every command range-checks before they reach a database or any arithmetic.
NUMBER_CASES = [
    Case("company-superscript-digit", ("sensors", "--company", "²"), EXIT_BAD_INPUT, ("'²'",)),
    Case("company-id-huge", ("sensors", "--company", HUGE), EXIT_BAD_INPUT, ("--company", HUGE)),
    Case("changes-company-huge", ("changes", "--company", HUGE), EXIT_BAD_INPUT, ("--company",)),
    Case("sensor-id-huge", ("run-sensor", HUGE), EXIT_BAD_INPUT, ("SENSOR_ID", HUGE)),
    Case("review-id-huge", ("review", "show", HUGE), EXIT_BAD_INPUT, ("ITEM_ID", HUGE)),
    Case("repair-sensor-huge", ("repair", "--sensor", HUGE), EXIT_BAD_INPUT, ("--sensor",)),
    Case("report-limit-negative", ("report", "--limit", "-1"), EXIT_BAD_INPUT, ("--limit", "-1")),
    Case("runs-limit-huge", ("runs", "--limit", HUGE), EXIT_BAD_INPUT, ("--limit", HUGE)),
    *(
        Case(f"window-{text}", ("stats-crawl", "--window", text), EXIT_BAD_INPUT, ("--window",))
        for text in ("0s", "nan", "inf", "-5m")
    ),
    Case("ui-port-huge", ("ui", "--port", "99999"), EXIT_BAD_INPUT, ("--port", "99999")),
    Case(
        "fixture-web-port-huge",
        ("fixture-web", "serve", "--port", "99999"),
        EXIT_BAD_INPUT,
        ("--port", "99999"),
    ),
    Case(
        "deadline-nan",
        ("schedule", "--once", "--deadline", "nan"),
        EXIT_BAD_INPUT,
        ("--deadline", "nan"),
        {"CATLAS_NOW": ALL_DUE},
    ),
    Case(
        "max-requests-huge",
        ("schedule", "--once", "-n", HUGE),
        EXIT_BAD_INPUT,
        ("--max-requests", HUGE),
        {"CATLAS_NOW": ALL_DUE},
    ),
    Case(
        "importance-nan",
        ("companies", "add", "Nan Inc", "--website", "http://nan.example", "--importance", "nan"),
        EXIT_BAD_INPUT,
        ("--importance", "nan"),
    ),
]

# Environments no run could work in: refused before anything is opened (exit 3).
START_UP_CASES = [
    Case(
        "database-under-proc",
        ("schedule", "--once"),
        EXIT_ENVIRONMENT,
        ("/proc/nope",),
        {"CATLAS_DATABASE_URL": "sqlite:////proc/nope/x.db", "CATLAS_NOW": ALL_DUE},
    ),
    Case(
        "database-under-proc-list",
        ("sensors",),
        EXIT_ENVIRONMENT,
        ("/proc/nope",),
        {"CATLAS_DATABASE_URL": "sqlite:////proc/nope/x.db"},
    ),
    Case(
        "state-dir-is-a-file",
        ("sensors",),
        EXIT_ENVIRONMENT,
        ("state database", "a-file"),
        {"CATLAS_STATE_DIR": "{case}/a-file"},
    ),
    Case(
        "ca-bundle-not-pem",
        ("run-sensor", "1", "--force"),
        EXIT_ENVIRONMENT,
        ("CATLAS_CA_BUNDLE", "PEM"),
        {"CATLAS_CA_BUNDLE": "{case}/a-file"},
    ),
    *(
        Case(
            f"setting-{name.lower()}-{index}",
            ("schedule", "--once"),
            EXIT_ENVIRONMENT,
            (name,),
            {name: value, "CATLAS_NOW": ALL_DUE} if name != "CATLAS_NOW" else {name: value},
        )
        for index, (name, value) in enumerate(
            [
                ("CATLAS_NOW", "9999-06-01T00:00:00Z"),
                ("CATLAS_FETCH_TOTAL_TIMEOUT_S", "nan"),
                ("CATLAS_FETCH_TOTAL_TIMEOUT_S", "-1"),
                ("CATLAS_MAX_REDIRECTS", "-1"),
                ("CATLAS_USER_AGENT", "catlas/0.1\r\nX-Evil: 1"),
                ("CATLAS_SCHEDULER_TICK_S", "0"),
                ("CATLAS_UI_PORT", "99999"),
            ]
        )
    ),
]

GOOD_ROW = "Good Co,http://good-co.example\n"
# A CSV that is not well-formed is refused whole, naming the line, before anything is stored.
IMPORT_CASES = [
    Case(
        f"import-{name}",
        ("companies", "import", "{case}/companies.csv"),
        EXIT_BAD_INPUT,
        ("companies.csv", *mentions),
        files={"companies.csv": "name,website\n" + text},
    )
    for name, text, mentions in [
        (
            "unclosed-quote",
            GOOD_ROW + '"Acme Two,http://a2.example\nBeta,http://beta.example\n',
            ("line 3", "quote"),
        ),
        ("huge-field", GOOD_ROW + "x" * (129 * 1024) + ",http://x.example\n", ("line 3", "KiB")),
        ("nul-byte", GOOD_ROW + "N\x00ul,http://nul.example\n", ("line 3", "NUL")),
    ]
]
IMPORT_CASES.append(
    Case(
        "company-name-over-300",
        ("companies", "add", "L" * 301, "--website", "http://long.example"),
        EXIT_BAD_INPUT,
        ("300",),
    )
)

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
    *NUMBER_CASES,
    *START_UP_CASES,
    *IMPORT_CASES,
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
        for name, text in case.files.items():
            (folder / name).write_text(text)
        env = {"CATLAS_HOSTS": str(hosts), "CATLAS_NOW": NOW}
        env.update({k: v.format(case=folder) for k, v in case.env.items()})
        before = stored_state(state)
        result = Catlas(folder, env).run(*(arg.format(case=folder) for arg in case.args))
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
