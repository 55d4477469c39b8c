"""`catlas sensors import FILE.csv` as a user runs it: companies created when missing, the
same file twice adds nothing, and every bad row is named by its line with a non-zero exit."""

from __future__ import annotations

from pathlib import Path

from cli_harness import Catlas, assert_no_traceback, assert_one_error_line, db_rows, iso

from fixture_web import DEFAULT_NOW

EXIT_BAD_INPUT = 2
NOW = iso(DEFAULT_NOW)

GOOD = (
    "Northwind Robotics,careers,http://northwind-robotics.com/careers,\n"
    "Northwind Robotics,pricing,http://northwind-robotics.com/pricing,generic_html\n"
    "OrbitPay,docs,http://orbitpay.com/docs\n"
)
BAD = (
    "OrbitPay,nowhere,http://orbitpay.com/x\n"  # line 5: unknown surface
    "OrbitPay,blog,ftp://orbitpay.com/blog\n"  # line 6: not http(s)
    ",blog,http://orbitpay.com/blog\n"  # line 7: no company
    "OrbitPay,blog,http://orbitpay.com/blog,telepathy\n"  # line 8: unknown connector
)


def _csv(tmp_path: Path, body: str, name: str = "sensors.csv") -> Path:
    path = tmp_path / name
    path.write_text("company,surface,url,connector\n" + body)
    return path


def test_good_rows_are_imported_and_bad_rows_named_by_line_with_exit_2(
    catlas: Catlas, tmp_path: Path
) -> None:
    state = tmp_path / ".catlas"
    # One company exists already: its sensors join it, it is not created twice.
    catlas.ok("companies", "add", "OrbitPay", "--website", "http://orbitpay.com", CATLAS_NOW=NOW)
    csv_file = _csv(tmp_path, GOOD + BAD)

    first = catlas.run("sensors", "import", str(csv_file), CATLAS_NOW=NOW)

    assert_no_traceback(first)
    assert first.code == EXIT_BAD_INPUT, str(first)
    rejected = [line for line in first.err_lines if line]
    assert len(rejected) == 4, str(first)
    for line_no, why in ((5, "nowhere"), (6, "ftp"), (7, "company is empty"), (8, "telepathy")):
        assert any(f"line {line_no}:" in e and why in e for e in rejected), (line_no, str(first))
    assert not any(f"line {n}:" in first.err for n in (2, 3, 4)), str(first)
    assert "3 sensors added, 0 already known, 1 companies created, 4 bad rows" in first.out

    companies = dict(db_rows(state, "SELECT name, website FROM companies"))
    assert companies == {"OrbitPay": "http://orbitpay.com", "Northwind Robotics": None}
    sensors = db_rows(
        state,
        "SELECT c.name, s.surface, s.url, s.connector, s.status, s.next_run_at "
        "FROM sensors s JOIN companies c ON c.id = s.company_id ORDER BY s.id",
    )
    assert [row[:5] for row in sensors] == [
        ("Northwind Robotics", "careers", "http://northwind-robotics.com/careers",
         "generic_html", "pending"),
        ("Northwind Robotics", "pricing", "http://northwind-robotics.com/pricing",
         "generic_html", "pending"),
        ("OrbitPay", "docs", "http://orbitpay.com/docs", "generic_html", "pending"),
    ]  # fmt: skip
    assert {row[5][:16] for row in sensors} == {"2026-01-05 08:00"}, "first runs are now"


def test_importing_the_same_file_twice_adds_nothing(catlas: Catlas, tmp_path: Path) -> None:
    state = tmp_path / ".catlas"
    csv_file = _csv(tmp_path, GOOD)

    first = catlas.ok("sensors", "import", str(csv_file), CATLAS_NOW=NOW)
    again = catlas.ok("sensors", "import", str(csv_file), CATLAS_NOW=NOW)

    assert "3 sensors added, 0 already known, 2 companies created, 0 bad rows" in first.out
    assert "0 sensors added, 3 already known, 0 companies created, 0 bad rows" in again.out
    assert db_rows(state, "SELECT count(*) FROM sensors") == [(3,)]
    assert db_rows(state, "SELECT count(*) FROM companies") == [(2,)]
    # A company the file creates waits for its discovery, like every new company.
    assert db_rows(state, "SELECT count(*) FROM queue_jobs WHERE kind = 'discover'") == [(2,)]


def test_a_file_without_the_url_column_is_one_error_and_stores_nothing(
    catlas: Catlas, tmp_path: Path
) -> None:
    csv_file = tmp_path / "no-url.csv"
    csv_file.write_text("company,surface\nOrbitPay,docs\n")

    result = catlas.run("sensors", "import", str(csv_file), CATLAS_NOW=NOW)

    assert_one_error_line(result, EXIT_BAD_INPUT, "missing: url")
    state_db = tmp_path / ".catlas" / "state.db"
    assert not state_db.exists() or db_rows(
        tmp_path / ".catlas", "SELECT count(*) FROM sensors"
    ) == [(0,)]
