"""Company names and CSV files that cannot be stored are refused before the state store,
on SQLite and PostgreSQL (which refuses NUL in text and names over 300 characters)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from catlas_assets.errors import CatlasError
from catlas_assets.services import catalog
from catlas_assets.services.company_import import import_companies, read_rows


def _companies(database_url: str) -> int:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM companies")).scalar_one())
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("name", "says"),
    [("L" * 301, "at most 300"), ("N\x00ul Inc", "control"), ("Two\nLines", "control")],
)
def test_a_name_the_store_cannot_hold_is_refused(
    make_runtime, database_url: str, name: str, says: str
) -> None:
    runtime = make_runtime(database_url)
    assert runtime.store is not None  # the schema exists: the count reads a real table
    with pytest.raises(CatlasError, match=says):
        catalog.add_company(runtime, name=name, website="http://fine.example")
    assert _companies(database_url) == 0
    # Exactly 300 characters is a name like any other.
    catalog.add_company(runtime, name="L" * 300, website="http://fine.example")
    assert _companies(database_url) == 1


@pytest.mark.postgres
def test_an_imported_row_with_a_long_name_is_reported_with_its_line_and_not_stored(
    make_runtime, database_url: str, tmp_path: Path
) -> None:
    csv_file = tmp_path / "companies.csv"
    csv_file.write_text(
        "name,website\n" + "L" * 301 + ",http://long.example\n" + "Good Co,http://good.example\n"
    )
    rows, bad = read_rows(csv_file)
    assert bad == ["line 2: a company name is at most 300 characters (301 given)"]
    runtime = make_runtime(database_url)
    report = import_companies(runtime, rows)
    assert (report.added, report.problems) == (1, [])
    assert _companies(database_url) == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            'Good,http://g.example\n"Acme,http://a.example\nBeta,http://b.example\n',
            "line 3: a quote",
        ),
        (
            "Good,http://g.example\n" + "x" * (128 * 1024 + 1) + ",http://x.example\n",
            "line 3: a field",
        ),
        ("Good,http://g.example\nN\x00ul,http://n.example\n", "line 3: a NUL byte"),
        ('"Multi\nline",http://m.example\n"Bad"x,http://b.example\n', "line 4"),
    ],
    ids=["unclosed-quote", "field-over-128-KiB", "nul-byte", "line-after-a-multiline-field"],
)
def test_a_csv_that_is_not_well_formed_is_refused_whole_naming_its_line(
    tmp_path: Path, body: str, says: str
) -> None:
    csv_file = tmp_path / "companies.csv"
    csv_file.write_text("name,website\n" + body)
    with pytest.raises(CatlasError, match=says):
        read_rows(csv_file)


def test_quoted_fields_with_commas_and_line_breaks_still_import(tmp_path: Path) -> None:
    csv_file = tmp_path / "companies.csv"
    csv_file.write_text('name,website\n"Quoted, Inc",http://q.example\n\nOk,http://ok.example\n')
    rows, bad = read_rows(csv_file)
    assert ([(r.line, r.name) for r in rows], bad) == ([(2, "Quoted, Inc"), (4, "Ok")], [])
