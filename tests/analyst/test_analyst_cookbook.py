"""Every query of the README's SQL cookbook answers on the demo lake, local and on S3, with
company names and typed values (timestamps as instants, counts as integers)."""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from catlas_assets import connect
from catlas_assets.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"

# The first test to run also lives through the session's demo (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)


def cookbook() -> list[str]:
    text = README.read_text()
    section = text.split("<!-- cookbook:start -->", 1)[1].split("<!-- cookbook:end -->", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, re.S)


QUERIES = cookbook()


def test_the_cookbook_has_ten_questions() -> None:
    assert len(QUERIES) == 10


def _typed(columns: list[str], types: list[str], rows: list[tuple[Any, ...]]) -> None:
    assert rows, "no answer"
    for name, kind, values in zip(columns, types, zip(*rows, strict=True), strict=True):
        present = [v for v in values if v is not None]
        if name == "company_name":
            assert present and all(isinstance(v, str) and v for v in present)
        if name.endswith("_at"):
            assert kind == "TIMESTAMP WITH TIME ZONE", (name, kind)
            assert all(isinstance(v, datetime) and v.tzinfo for v in present)
        if name == "week":
            assert all(isinstance(v, date) for v in present)
        if kind == "BIGINT":
            assert all(isinstance(v, int) for v in present)


def _run_all(settings: Settings) -> None:
    con = connect(settings)
    try:
        for number, query in enumerate(QUERIES, 1):
            relation = con.sql(query)
            columns, types = list(relation.columns), [str(t) for t in relation.types]
            assert "company_name" in columns, number
            try:
                _typed(columns, types, relation.fetchall())
            except AssertionError as exc:
                raise AssertionError(f"cookbook query {number}: {exc}") from None
    finally:
        con.close()


def test_every_cookbook_query_answers_on_the_local_demo_lake(demo_state: Path) -> None:
    _run_all(Settings(state_dir=str(demo_state)))


def test_every_cookbook_query_answers_on_the_s3_demo_lake(
    demo_state: Path, s3_demo_lake: tuple[str, str]
) -> None:
    lake_url, endpoint = s3_demo_lake
    _run_all(Settings(state_dir=str(demo_state), lake_url=lake_url, s3_endpoint_url=endpoint))
