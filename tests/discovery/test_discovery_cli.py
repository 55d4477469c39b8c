"""The discovery commands as a user runs them: dry run writes nothing, import is
idempotent and reports bad rows by line, onboard seeds sensors and prints a verdict."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_harness import Catlas, assert_no_traceback


@pytest.fixture
def catlas(tmp_path: Path, web) -> Catlas:
    hosts = web.write_hosts_file(tmp_path / "fixture-hosts")
    # No spacing between requests: the fixture web is local.
    return Catlas(tmp_path, {"CATLAS_HOSTS": str(hosts), "CATLAS_DOMAIN_SPACING_S": "0"})


def test_discover_is_a_dry_run_that_writes_nothing(catlas: Catlas, tmp_path: Path) -> None:
    result = catlas.ok("discover", "http://harborlight.com", "--json")
    data = json.loads(result.out)
    selected = {c["surface"]: c["url"] for c in data["candidates"] if c["selected"]}
    assert selected["jobs_board"] == "http://boards-api.greenhouse.io/v1/boards/harborlight/jobs"
    assert data["requests"] <= data["max_requests"] == 25
    table = catlas.ok("discover", "http://harborlight.com")
    assert "jobs_board" in table.out and "requests" in table.out
    assert not (tmp_path / ".catlas" / "state.db").exists()
    assert not (tmp_path / ".catlas" / "lake").exists()


def test_import_is_idempotent_and_reports_bad_rows_by_line(catlas: Catlas, tmp_path: Path) -> None:
    csv_file = tmp_path / "companies.csv"
    csv_file.write_text(
        "name,website,importance,tier\n"
        "Saltmarsh,http://saltmarsh.io,0.7,2\n"
        "Broken,ftp://nope.example,0.5,3\n"
        "Fernhill,http://fernhill.co,1.5,3\n"
        "Quiet Harbor Co,,0.2,\n"
    )
    first = catlas.run("companies", "import", str(csv_file))
    assert_no_traceback(first)
    # Rows were rejected: the import says so by its exit code, the good rows still land.
    assert first.code == 2, str(first)
    assert "line 3" in first.err and "line 4" in first.err and "line 2" not in first.err
    assert "2 added" in first.out
    again = catlas.run("companies", "import", str(csv_file))
    assert again.code == 2, str(again)
    assert "0 added, 2 already known" in again.out
    db = sqlite3.connect(tmp_path / ".catlas" / "state.db")
    jobs = db.execute("SELECT count(*) FROM queue_jobs WHERE kind = 'discover'").fetchone()
    assert jobs == (2,)

    onboarded = catlas.ok("onboard", "--pending")
    assert "verdict: success" in onboarded.out
    statuses = dict(db.execute("SELECT name, onboarding_status FROM companies").fetchall())
    assert statuses == {"Saltmarsh": "active", "Quiet Harbor Co": "no_website"}
    surfaces = {r[0] for r in db.execute("SELECT surface FROM sensors").fetchall()}
    assert surfaces == {"homepage", "careers", "jobs_board"}


def test_onboard_one_company_with_fetch_now(catlas: Catlas, tmp_path: Path) -> None:
    catlas.ok("companies", "add", "Pinecrest Cloud", "--website", "http://pinecrest.cloud")
    result = catlas.ok("onboard", "--company", "Pinecrest Cloud", "--fetch-now")
    assert "verdict: success" in result.out
    db = sqlite3.connect(tmp_path / ".catlas" / "state.db")
    rows = db.execute("SELECT surface, connector FROM sensors ORDER BY surface").fetchall()
    assert ("status", "statuspage") in rows and len(rows) == 4


def test_discover_accepts_a_bare_domain_as_people_write_it(catlas: Catlas) -> None:
    # No scheme, upper case, a trailing slash: https is tried first, then http answers.
    result = catlas.ok("discover", "HarborLight.COM/", "--json")
    data = json.loads(result.out)
    assert data["website"] == "https://harborlight.com"
    assert data["homepage"].startswith("http://harborlight.com")
    selected = {c["surface"] for c in data["candidates"] if c["selected"]}
    assert "jobs_board" in selected
    assert data["requests"] <= 25


def test_import_stores_one_canonical_website_and_exits_2_on_any_rejected_row(
    catlas: Catlas, tmp_path: Path
) -> None:
    csv_file = tmp_path / "companies.csv"
    csv_file.write_text(
        "name,website\n"
        "Bare,saltmarsh.io\n"
        "Shouting,WWW.Fernhill.CO/en/\n"
        "Umlaut,bücher.example\n"
        "Mail,mailto:jobs@acme.test\n"
    )
    result = catlas.run("companies", "import", str(csv_file))
    assert_no_traceback(result)
    assert result.code == 2, str(result)
    assert "line 5" in result.err and "line 2" not in result.err
    assert "3 added" in result.out
    db = sqlite3.connect(tmp_path / ".catlas" / "state.db")
    rows = dict(db.execute("SELECT name, website FROM companies").fetchall())
    assert rows == {
        "Bare": "https://saltmarsh.io",
        "Shouting": "https://www.fernhill.co/en",
        "Umlaut": "https://xn--bcher-kva.example",
    }
    domains = {r[0] for r in db.execute("SELECT domain FROM companies").fetchall()}
    assert domains == {"saltmarsh.io", "fernhill.co", "xn--bcher-kva.example"}
