"""Lake rows to Arrow (`lake_batches.to_arrow`): values already as a column keeps them go
through as they are, any other value is converted, and both give the same column."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pyarrow as pa
import pytest

from catlas_assets.domain.vocabulary import Outcome
from catlas_assets.errors import StorageError
from resources.lake_batches import pack, to_arrow, unpack
from resources.lake_tables import TABLES

OBSERVATIONS = TABLES["observations"]
INSTANT = datetime(2026, 1, 5, 8, 0, 0, 123456, tzinfo=UTC)


def _row(**values) -> dict:
    return {"observation_id": "obs_1", "sensor_id": 1, "fetched_at": INSTANT, **values}


def test_an_instant_reads_the_same_however_it_is_given() -> None:
    given = [
        INSTANT,  # aware UTC
        INSTANT.replace(tzinfo=None),  # naive: UTC, never the machine's zone
        INSTANT.astimezone(timezone(timedelta(hours=2))),  # another offset
        "2026-01-05 08:00:00.123456",  # text, as SQLite gives it back
        "2026-01-05T10:00:00.123456+02:00",
    ]
    for value in given:
        table = to_arrow(OBSERVATIONS, [_row(fetched_at=value)])
        assert table.column("fetched_at").to_pylist() == [INSTANT], value
    # A batch that mixes them is converted value by value: the same instants.
    mixed = to_arrow(OBSERVATIONS, [_row(fetched_at=v) for v in given])
    assert mixed.column("fetched_at").to_pylist() == [INSTANT] * len(given)


def test_a_text_column_drops_nul_and_writes_documents_and_instants_as_text() -> None:
    rows = [
        _row(url="https://acme.test/jobs", etag='"a\x00b"'),
        _row(url="https://acme.test/\x00x", crawl_config={"b": 1, "a": [1, 2]}),
        _row(url=None, crawl_config=["x"], last_modified=INSTANT, etag=b'W/"e"'),
    ]
    table = to_arrow(OBSERVATIONS, rows)
    assert table.column("url").to_pylist() == [
        "https://acme.test/jobs",
        "https://acme.test/x",
        None,
    ]
    assert table.column("etag").to_pylist() == ['"ab"', None, 'W/"e"']
    assert table.column("crawl_config").to_pylist() == [None, '{"a": [1, 2], "b": 1}', '["x"]']
    assert table.column("last_modified").to_pylist() == [None, None, INSTANT.isoformat()]
    # Plain text alone takes the direct path: the same answer, row by row.
    for row in rows:
        alone = to_arrow(OBSERVATIONS, [row])
        assert alone.to_pylist() == table.slice(rows.index(row), 1).to_pylist()


def test_the_table_has_the_lake_schema_and_missing_columns_are_null() -> None:
    table = to_arrow(
        OBSERVATIONS,
        [_row(http_status=304, not_modified=True, outcome=Outcome.NOT_MODIFIED)],
    )
    assert table.schema == OBSERVATIONS.schema
    assert table.column("http_status").to_pylist() == [304]
    assert table.column("outcome").to_pylist() == ["not_modified"]  # a StrEnum as its value
    assert table.column("content_hash").to_pylist() == [None]
    assert unpack(pack({"observations": table}))["observations"].equals(table)


def test_an_unknown_column_is_refused_by_name() -> None:
    with pytest.raises(StorageError, match=r"observations: unknown column\(s\) \['colour'\]"):
        to_arrow(OBSERVATIONS, [_row(), _row(colour="red")])


def test_no_rows_give_an_empty_table_of_the_schema() -> None:
    table = to_arrow(OBSERVATIONS, [])
    assert table.num_rows == 0 and table.schema == OBSERVATIONS.schema
    assert isinstance(table, pa.Table)
